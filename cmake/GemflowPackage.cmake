# Packages: `make package` (the `package` target, i.e. cpack in the build folder) writes
#   gemflow_<version>_<arch>.deb   Debian package, installed under /usr
#   gemflow-<version>-Linux.tar.gz the same tree without a prefix (bin/, lib/, share/ ...)
# with the programs, the plugins in <prefix>/lib/gemflow/plugins (where the installed `gemflow`,
# Studio and the Python module look), the SDK (headers, libgemflow_core, CMake package), the
# Python module in <prefix>/lib/python3/dist-packages, Studio's desktop entry and icon, the man
# page of `gemflow`, the docs, the shipped workflows and their sample data. The Debian
# dependencies come from the real link dependencies (dpkg-shlibdeps) plus what no ELF file says
# (Python and NumPy for the module). tests/package checks the package end to end.

# ---- What only the package adds to the install --------------------------------------------
set(GEMFLOW_DOC_DIR ${CMAKE_INSTALL_DATADIR}/doc/gemflow)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${GEMFLOW_DOC_DIR} COMPONENT docs)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${GEMFLOW_DOC_DIR} COMPONENT docs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${GEMFLOW_DOC_DIR}/examples COMPONENT docs
        PATTERN "__pycache__" EXCLUDE)
# the workflows keep their relative paths to the sample data (../sample_data/...)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/workflows ${PROJECT_SOURCE_DIR}/sample_data
        DESTINATION ${CMAKE_INSTALL_DATADIR}/gemflow COMPONENT data PATTERN ".gitattributes" EXCLUDE)

if(TARGET gemflow-studio)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/gemflow-studio.desktop
          DESTINATION ${CMAKE_INSTALL_DATADIR}/applications COMPONENT studio)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/gemflow.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps COMPONENT studio)
endif()

find_program(GEMFLOW_HELP2MAN help2man)
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  # the sanitizer presets are not packaged (and running their gemflow at build time would report leaks)
elseif(GEMFLOW_HELP2MAN)
  set(_man ${CMAKE_BINARY_DIR}/man/gemflow.1)
  add_custom_command(OUTPUT ${_man}.gz
    COMMAND ${CMAKE_COMMAND} -DGEMFLOW=$<TARGET_FILE:gemflow> -DHELP2MAN=${GEMFLOW_HELP2MAN} -DOUT=${_man}
            -P ${PROJECT_SOURCE_DIR}/packaging/man.cmake
    COMMAND gzip -9nf ${_man}
    DEPENDS gemflow ${PROJECT_SOURCE_DIR}/packaging/man.cmake
    COMMENT "Man page of gemflow (help2man)")
  add_custom_target(gemflow_man ALL DEPENDS ${_man}.gz)
  install(FILES ${_man}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT docs)
else()
  message(STATUS "Gemflow: no man page for gemflow (help2man not found: sudo apt-get install help2man)")
endif()

# ---- CPack -------------------------------------------------------------------------------
set(CPACK_PACKAGE_NAME gemflow)
set(CPACK_PACKAGE_VENDOR "Gemflow")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Plugin-based scientific workflows with GPU algorithms")
set(CPACK_PACKAGE_DESCRIPTION
    "Gemflow runs scientific workflows of typed nodes from plugins: NMR structure calculation by\n"
    "distance geometry, dense linear algebra, fractal flames, segmentation, circle packing.\n"
    "Contents: the gemflow command, Gemflow Studio, the plugins, the Python module, the SDK\n"
    "(headers and CMake package for third-party plugins), docs and example workflows.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_RESOURCE_FILE_README ${PROJECT_SOURCE_DIR}/README.md)
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_STRIP_FILES ON)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/packaging/CPackOptions.cmake)

set(GEMFLOW_PACKAGE_MAINTAINER "Gemflow developers <gemflow@localhost>" CACHE STRING
    "Maintainer field of the Debian package")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${GEMFLOW_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # gemflow_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libgemflow_core is in the package itself: dpkg-shlibdeps finds it there
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR}/lib)
set(_deps "")
if(GEMFLOW_HAVE_PYTHON)
  # the extension module is built for this Python's ABI (one minor version) and uses NumPy
  string(REPLACE "." ";" _v "${GEMFLOW_PYTHON_VERSION}")
  list(GET _v 0 _major)
  list(GET _v 1 _minor)
  math(EXPR _next "${_minor} + 1")
  set(_deps "python3 (>= ${_major}.${_minor}~), python3 (<< ${_major}.${_next}), python3-numpy")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${_deps}")
# the SDK: find_package(Gemflow) needs Boost's headers; plugins need a compiler and CMake
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libboost-dev, cmake, g++")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-pandas, python3-tqdm, libgtest-dev")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/deb/prerm)
if(GEMFLOW_HAVE_CUDA)
  # NVIDIA's CUDA libraries are not Debian packages: dpkg-shlibdeps cannot name them
  message(STATUS "Gemflow: a package of this CUDA build needs the CUDA ${CUDAToolkit_VERSION_MAJOR} runtime "
                 "libraries (cudart, cuBLAS, cuSOLVER, cuSPARSE) on the target machine; GEMFLOW_CUDA=OFF makes "
                 "one that needs Debian packages only")
endif()
include(CPack)
