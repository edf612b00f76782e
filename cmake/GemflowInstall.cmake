# Install the SDK (component "sdk"): core library, public headers, CMake package (targets,
# version, plugin helper). `cmake --install <build> --component sdk` installs only this.
include(CMakePackageConfigHelpers)
install(TARGETS gemflow_core EXPORT GemflowTargets COMPONENT sdk
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/gemflow DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT sdk FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/core/include/gemflow/config.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gemflow COMPONENT sdk)
# The plugin folder the installed host searches (<prefix>/<libdir>/gemflow/plugins).
install(DIRECTORY DESTINATION ${GEMFLOW_PLUGIN_INSTALL_DIR} COMPONENT sdk)
set(GEMFLOW_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Gemflow)
install(EXPORT GemflowTargets NAMESPACE gemflow:: DESTINATION ${GEMFLOW_CMAKE_DIR} COMPONENT sdk)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/GemflowConfig.cmake.in
  ${PROJECT_BINARY_DIR}/GemflowConfig.cmake INSTALL_DESTINATION ${GEMFLOW_CMAKE_DIR}
  PATH_VARS GEMFLOW_PLUGIN_INSTALL_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/GemflowConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/GemflowConfig.cmake ${PROJECT_BINARY_DIR}/GemflowConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/GemflowPlugin.cmake DESTINATION ${GEMFLOW_CMAKE_DIR} COMPONENT sdk)
