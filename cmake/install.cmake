# What `cmake --install` puts under the prefix, and the Debian package (cpack):
#   bin/                       p2run, p2sim, p2map
#   lib/                       libp2tca.so (lib/CMakeLists.txt), pkgconfig/p2tca.pc,
#                              cmake/peach2sim/ (find_package(peach2sim): peach2sim::p2tca)
#   include/peach2sim/         tca-api.h, p2.h and what they include
#   share/peach2sim/           topologies/, plots/
# p2run finds p2sim beside itself and the default topology in ../share/peach2sim.
include(CMakePackageConfigHelpers)

foreach(tool p2run p2sim)
  if(TARGET ${tool})
    install(TARGETS ${tool} EXPORT peach2simTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
# p2map as the source has it: its build-tree paths stay unset, so it finds
# p2run and p2sim beside itself.
install(PROGRAMS ${P2_SOURCE_DIR}/emu/p2map.py DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME p2map)
install(DIRECTORY ${P2_SOURCE_DIR}/topologies/ DESTINATION ${P2_INSTALL_DATADIR}/topologies)
file(GLOB P2_PLOT_SCRIPTS CONFIGURE_DEPENDS ${P2_SOURCE_DIR}/plots/*.py)
install(PROGRAMS ${P2_PLOT_SCRIPTS} DESTINATION ${P2_INSTALL_DATADIR}/plots)

# pkg-config: paths relative to the .pc file, so any --prefix works.
file(RELATIVE_PATH P2_PC_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" P2_PC_PREFIX "${P2_PC_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/p2tca.pc.in ${PROJECT_BINARY_DIR}/p2tca.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/p2tca.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# CMake package: find_package(peach2sim) gives peach2sim::p2tca (and the
# executables peach2sim::p2run, peach2sim::p2sim).
set(P2_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/peach2sim)
install(EXPORT peach2simTargets NAMESPACE peach2sim:: DESTINATION ${P2_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/peach2simConfig.cmake.in
  ${PROJECT_BINARY_DIR}/peach2simConfig.cmake INSTALL_DESTINATION ${P2_CMAKE_DIR})
# 0.x: only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/peach2simConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/peach2simConfig.cmake
              ${PROJECT_BINARY_DIR}/peach2simConfigVersion.cmake
        DESTINATION ${P2_CMAKE_DIR})

# Debian package of the whole install: `cpack -G DEB` in the build directory.
set(CPACK_PACKAGE_NAME peach2sim)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "PEACH2/TCA cluster simulator and emulator, with the TCA communication library")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "A cycle-level SystemC model of PEACH2 boards and their PCIe links serving the real TCA "
    "library (libp2tca) through an emulated device: p2run runs ordinary programs as the ranks "
    "of a virtual PEACH2 cluster (p2sim), moving their bytes at the simulated times.")
set(CPACK_PACKAGE_CONTACT "peach2sim developers <peach2sim@localhost>")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "peach2sim developers <peach2sim@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libsystemc (>= 2.3.4), libc6, libstdc++6")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON) # shlibs file and the ldconfig trigger
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
include(CPack)
