# Install rules and the Debian package (CPack DEB):
#   cmake --build build/release --target package  ->  build/release/netsmith_<version>_amd64.deb
# The programs in /usr/bin, templates and examples in /usr/share/netsmith, a desktop entry with
# a MIME type for *.netsmith.json, hicolor icons, a man page for netsmith-cli made from its
# --help, and bash completion. Runtime dependencies come from dpkg-shlibdeps, plus the BLAS and
# the data set that are loaded at run time.
include(GNUInstallDirs)
set(_res ${PROJECT_SOURCE_DIR}/resources)
set(_inst ${PROJECT_SOURCE_DIR}/installer)

install(TARGETS netsmith-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The project files only: runs and the data `make-dataset` writes beside the examples
# (mosaics/, rotations/) stay out of the package.
install(DIRECTORY ${_res}/templates ${_res}/examples DESTINATION ${CMAKE_INSTALL_DATADIR}/netsmith
        FILES_MATCHING PATTERN "*.netsmith.json"
        PATTERN "runs" EXCLUDE PATTERN "mosaics" EXCLUDE PATTERN "rotations" EXCLUDE
        PATTERN "scenes" EXCLUDE)
# The user guide, the CLI reference and the pictures they show (Help > Guide in the studio).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/guide ${PROJECT_SOURCE_DIR}/docs/screenshots
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/netsmith)
install(FILES ${PROJECT_SOURCE_DIR}/docs/cli.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/netsmith)
install(FILES ${_inst}/netsmith-cli.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME netsmith-cli)

# The man page, from the program's own help.
set(_man ${CMAKE_BINARY_DIR}/netsmith-cli.1)
add_custom_command(
  OUTPUT ${_man}.gz
  COMMAND ${CMAKE_COMMAND} -DCLI=$<TARGET_FILE:netsmith-cli> -DOUT=${_man} -P ${_inst}/make_manpage.cmake
  COMMAND gzip -9nf ${_man}
  DEPENDS netsmith-cli ${_inst}/make_manpage.cmake
  COMMENT "netsmith-cli.1 from netsmith-cli --help")
add_custom_target(netsmith_manpage ALL DEPENDS ${_man}.gz)
install(FILES ${_man}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

if(NETSMITH_GUI)
  install(TARGETS netsmith RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${_inst}/netsmith.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${_inst}/netsmith-mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages
          RENAME netsmith.xml)
  install(FILES ${_res}/icons/netsmith.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
  foreach(size 16 32 48 64 128 256)
    install(FILES ${_res}/icons/hicolor/${size}x${size}/netsmith.png
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
  endforeach()
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME netsmith)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "Netsmith")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Desktop studio for convolutional networks (Qt 6 + LibTorch)")
set(CPACK_PACKAGE_DESCRIPTION
    "Build a CNN as a graph, train it with live charts, export it to ONNX, safetensors and PyTorch code; netsmith-cli runs the same project files headless.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Netsmith developers <netsmith@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Loaded at run time, so dpkg-shlibdeps cannot see them: the fast BLAS, the default data and
# Qt's platform plugins (qt6-qpa-plugins: X11 / Wayland, needed to show a window).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0-pthread, dataset-fashion-mnist, qt6-qpa-plugins")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "desktop-file-utils, shared-mime-info, hicolor-icon-theme")
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
set(CPACK_STRIP_FILES ON)
include(CPack)
