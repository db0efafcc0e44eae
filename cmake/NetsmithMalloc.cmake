# tcmalloc for the programs (not the libraries): LibTorch and OpenCV allocate and free large
# buffers on every batch and every sample, and glibc's malloc hands them back to the kernel
# and takes them again (page faults: ~20% of a CPU training step's system time, measured with
# `netsmith-cli bench`). Debian's libtcmalloc-minimal4 keeps them. `netsmith-cli env` names the
# malloc in use. Off for the sanitizer preset (ASan brings its own allocator).
option(NETSMITH_TCMALLOC "Link the programs against tcmalloc (libtcmalloc-minimal4) when found" ON)

if(NETSMITH_TCMALLOC)
  find_library(NETSMITH_TCMALLOC_LIBRARY
    NAMES tcmalloc_minimal libtcmalloc_minimal.so.4
    PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE})
  if(NETSMITH_TCMALLOC_LIBRARY)
    message(STATUS "Netsmith: programs use tcmalloc (${NETSMITH_TCMALLOC_LIBRARY})")
  else()
    message(STATUS "Netsmith: tcmalloc not found (libtcmalloc-minimal4): programs use glibc malloc")
  endif()
endif()

# Links `target` against tcmalloc when it was found. --no-as-needed: nothing calls tcmalloc by
# name, and the library must still be loaded to replace malloc.
function(netsmith_fast_malloc target)
  if(NETSMITH_TCMALLOC AND NETSMITH_TCMALLOC_LIBRARY)
    target_link_libraries(${target} PRIVATE -Wl,--no-as-needed ${NETSMITH_TCMALLOC_LIBRARY}
                          -Wl,--as-needed)
  endif()
endfunction()
