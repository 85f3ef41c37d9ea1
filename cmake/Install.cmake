# What `cmake --install` puts under the prefix: the public headers,
# librudnn.so and librudnn_runtime.so, the tools, a CMake package
# (find_package(rudnn CONFIG) gives rudnn::rudnn and rudnn::runtime) and
# pkg-config files (rudnn, rudnn_runtime).
include(CMakePackageConfigHelpers)

set(RUDNN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/rudnn)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/rudnn
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h*"
        PATTERN "*.in" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/include/rudnn/version_number.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rudnn)
install(TARGETS rudnn rudnn_runtime EXPORT rudnnTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS rudnn-opt rudnn-translate rudnn-run rudnn-emulate
                rudnn-bundle-run
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT rudnnTargets NAMESPACE rudnn::
        DESTINATION ${RUDNN_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/rudnnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/rudnnConfig.cmake
  INSTALL_DESTINATION ${RUDNN_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rudnnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rudnnConfig.cmake
              ${PROJECT_BINARY_DIR}/rudnnConfigVersion.cmake
        DESTINATION ${RUDNN_INSTALL_CMAKEDIR})

# Relative to the .pc file, so `cmake --install --prefix` may move it.
file(RELATIVE_PATH RUDNN_PC_TO_PREFIX
     /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
foreach(package rudnn rudnn_runtime)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${package}.pc.in
                 ${PROJECT_BINARY_DIR}/${package}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${package}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
