# Per-generator CPack settings (CPACK_PROJECT_CONFIG_FILE): the Debian package installs under
# /usr; the tarball holds the tree without a prefix (unpack it anywhere: bin/gemflow finds
# ../lib/gemflow/plugins by itself).
if(CPACK_GENERATOR STREQUAL "DEB")
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  set(CPACK_SET_DESTDIR OFF)
elseif(CPACK_GENERATOR STREQUAL "TGZ")
  set(CPACK_PACKAGING_INSTALL_PREFIX /)
  set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
endif()
