# Build speed on small machines: ccache when present (with the sloppiness precompiled headers
# need), and Ninja via CMakePresets.json. The cache is keyed relative to the checkout
# (CCACHE_BASEDIR, CCACHE_NOHASHDIR): CI builds a fresh clone in a new folder, and absolute
# paths in the compiler's arguments would otherwise miss every object cached for another clone.
find_program(NETSMITH_CCACHE ccache)
if(NETSMITH_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" "CCACHE_NOHASHDIR=true"
      ${NETSMITH_CCACHE})
endif()
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()
