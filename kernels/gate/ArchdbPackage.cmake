# ArchdbPackage.cmake — the package other projects find archdb by (`find_package(archdb CONFIG)`), in the two
# places it can be found, and the install rules of the data an installed archdb answers from:
#   archdb_build_tree_package(SOURCE_DIR <checkout> BINARY_DIR <build dir> EXECUTABLE <archdb> VERSION <x.y.z>
#                             LLVM_MAJOR <n>)
#     writes archdbConfig.cmake and its version file into <build dir>, so CMAKE_PREFIX_PATH=<build dir> (or
#     archdb_DIR) finds the build's archdb and the checkout's gate scripts: no install needed.
#   archdb_install_package(SOURCE_DIR <checkout> BINARY_DIR <dir for generated files> VERSION <x.y.z>
#                          LLVM_MAJOR <n>)
#     installs the catalog, the target list and the committed columns to <DATADIR>/archdb (never a lock file
#     or anything else hidden in data/), and archdbConfig.cmake (with its version file and the gate's scripts)
#     to <LIBDIR>/cmake/archdb. The caller installs the archdb executable to <BINDIR>.
# Everything an install writes is under the prefix; an installed archdb finds its data and keeps its
# database under the same prefix (cli/context.cpp; docs/development.md, "The CMake package").
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

function(archdb_build_tree_package)
  cmake_parse_arguments(PARSE_ARGV 0 P "" "SOURCE_DIR;BINARY_DIR;EXECUTABLE;VERSION;LLVM_MAJOR" "")
  set(LLVM_VERSION_MAJOR ${P_LLVM_MAJOR})
  set(ARCHDB_PACKAGE_EXECUTABLE "${P_EXECUTABLE}")
  set(ARCHDB_PACKAGE_GATE_DIR "${P_SOURCE_DIR}/kernels/gate")
  configure_package_config_file("${P_SOURCE_DIR}/kernels/gate/archdbConfig.cmake.in"
    "${P_BINARY_DIR}/archdbConfig.cmake" INSTALL_DESTINATION "${P_BINARY_DIR}" INSTALL_PREFIX "${P_BINARY_DIR}"
    PATH_VARS ARCHDB_PACKAGE_EXECUTABLE ARCHDB_PACKAGE_GATE_DIR)
  write_basic_package_version_file("${P_BINARY_DIR}/archdbConfigVersion.cmake" VERSION ${P_VERSION}
    COMPATIBILITY SameMinorVersion)
endfunction()

function(archdb_install_package)
  cmake_parse_arguments(PARSE_ARGV 0 P "" "SOURCE_DIR;BINARY_DIR;VERSION;LLVM_MAJOR" "")
  install(FILES "${P_SOURCE_DIR}/schema/catalog.txt" "${P_SOURCE_DIR}/schema/targets.txt"
          DESTINATION ${CMAKE_INSTALL_DATADIR}/archdb/schema)
  # data/ holds the columns and, while a writer runs, its lock files (.llvmNN.write-lock): only the columns.
  install(DIRECTORY "${P_SOURCE_DIR}/data/" DESTINATION ${CMAKE_INSTALL_DATADIR}/archdb/data
          PATTERN ".*" EXCLUDE)
  set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/archdb)
  set(LLVM_VERSION_MAJOR ${P_LLVM_MAJOR})
  set(ARCHDB_PACKAGE_EXECUTABLE "${CMAKE_INSTALL_BINDIR}/archdb")
  set(ARCHDB_PACKAGE_GATE_DIR "${cmake_dir}")
  # Generated apart from the build tree's config (at the top of the build directory), in a folder whose name
  # does not start with "archdb", which find_package would search under a prefix.
  set(generated "${P_BINARY_DIR}/package-install")
  configure_package_config_file("${P_SOURCE_DIR}/kernels/gate/archdbConfig.cmake.in"
    "${generated}/archdbConfig.cmake" INSTALL_DESTINATION ${cmake_dir}
    PATH_VARS ARCHDB_PACKAGE_EXECUTABLE ARCHDB_PACKAGE_GATE_DIR)
  write_basic_package_version_file("${generated}/archdbConfigVersion.cmake" VERSION ${P_VERSION}
    COMPATIBILITY SameMinorVersion)
  install(FILES "${generated}/archdbConfig.cmake" "${generated}/archdbConfigVersion.cmake"
                "${P_SOURCE_DIR}/kernels/gate/ArchdbGate.cmake" "${P_SOURCE_DIR}/kernels/gate/ArchdbGateStep.cmake"
                "${P_SOURCE_DIR}/kernels/gate/ArchdbGateManifest.cmake" "${P_SOURCE_DIR}/kernels/gate/ArchdbGateDecide.cmake"
          DESTINATION ${cmake_dir})
endfunction()
