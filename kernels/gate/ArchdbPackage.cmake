# ArchdbPackage.cmake — the install rules of archdb's data and package config, shared by this project's
# install and the test that installs them with another GNUInstallDirs layout:
#   archdb_install_package(SOURCE_DIR <checkout> BINARY_DIR <dir for generated files> VERSION <x.y.z>
#                          LLVM_MAJOR <n>)
# installs the catalog, the target list and the committed columns to <DATADIR>/archdb, and archdbConfig.cmake
# (with its version file and the gate's scripts) to <LIBDIR>/cmake/archdb. The config computes the prefix
# from its own location, so any CMAKE_INSTALL_LIBDIR works (lib, lib64, lib/x86_64-linux-gnu). The caller
# installs the archdb executable to <BINDIR>.
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

function(archdb_install_package)
  cmake_parse_arguments(PARSE_ARGV 0 P "" "SOURCE_DIR;BINARY_DIR;VERSION;LLVM_MAJOR" "")
  install(FILES "${P_SOURCE_DIR}/schema/catalog.txt" "${P_SOURCE_DIR}/schema/targets.txt"
          DESTINATION ${CMAKE_INSTALL_DATADIR}/archdb/schema)
  install(DIRECTORY "${P_SOURCE_DIR}/data/" DESTINATION ${CMAKE_INSTALL_DATADIR}/archdb/data)
  set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/archdb)
  set(LLVM_VERSION_MAJOR ${P_LLVM_MAJOR})
  configure_package_config_file("${P_SOURCE_DIR}/kernels/gate/archdbConfig.cmake.in"
    "${P_BINARY_DIR}/archdbConfig.cmake" INSTALL_DESTINATION ${cmake_dir} PATH_VARS CMAKE_INSTALL_BINDIR)
  write_basic_package_version_file("${P_BINARY_DIR}/archdbConfigVersion.cmake" VERSION ${P_VERSION}
    COMPATIBILITY SameMinorVersion)
  install(FILES "${P_BINARY_DIR}/archdbConfig.cmake" "${P_BINARY_DIR}/archdbConfigVersion.cmake"
                "${P_SOURCE_DIR}/kernels/gate/ArchdbGate.cmake" "${P_SOURCE_DIR}/kernels/gate/ArchdbGateStep.cmake"
                "${P_SOURCE_DIR}/kernels/gate/ArchdbGateManifest.cmake" "${P_SOURCE_DIR}/kernels/gate/ArchdbGateDecide.cmake"
          DESTINATION ${cmake_dir})
endfunction()
