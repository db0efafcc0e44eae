# netsmith_warnings(<target>): -Wall -Wextra on our own code only (LibTorch and Qt headers are
# included as system headers through their imported targets).
function(netsmith_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra)
  endif()
endfunction()
