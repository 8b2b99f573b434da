# ArchdbGate.cmake — a kernel build gate: every (kernel variant, target) pair is decided before compiling by
# one `archdb check` over all the manifests and targets (ArchdbGateDecide.cmake: one process however many
# pairs); only cleared pairs are compiled into a code object, whose device IR is checked again against
# the variant's manifest (an intrinsic the manifest does not list fails the build). Every refusal is named
# in the build log, and a gate manifest (JSON) records what was built and what was not, with the keys and
# evidence, and one resolved target list per kernel for the runtime.
#
#   archdb_add_gated_kernels(<name>
#     MANIFESTS <manifest.json>...      # archdb.kernel-manifest/v1 files; "source" is relative to SOURCE_DIR
#     [SOURCE_DIR <dir>]                # default: the directory of the first manifest's parent
#     [TARGETS <gfx>...]                # default: gfx90a gfx942 gfx950 gfx1100 gfx1201 gfx1250; a processor may
#                                       # carry +wavefrontsize64 (gfx1100:+wavefrontsize64: -mwavefrontsize64)
#     [COMPILER <clang++>]              # default: CMAKE_HIP_COMPILER, else clang++-<LLVM major of archdb>, clang++
#     [FLAVOR <llvmNN>]                 # default: derived from the compiler (`archdb check --compiler`)
#     [ARCHDB <archdb executable or target>]   # default: the target archdb, else the imported archdb::archdb
#     [ARCHDB_ARGS <args>...]           # e.g. --db <file> for a database of your own
#     [COMPILE_FLAGS <flags>...]        # default: -x hip --cuda-device-only -nogpulib -nogpuinc -O3 -std=c++17
#     [INCLUDE_DIRS <dir>...] [DEPENDS <file>...]
#     [OBJDUMP <llvm-objdump>]          # default: llvm-objdump-<major> or llvm-objdump next to the compiler
#     [OUTPUT_DIR <dir>]                # default: ${CMAKE_CURRENT_BINARY_DIR}/<name>
#     [ALLOW_UNVALIDATED])              # also build pairs the column cannot answer (with a warning)
#
# Produces the target <name> (part of ALL), <OUTPUT_DIR>/<kernel>/<target>.hsaco for cleared pairs (':' in a
# target spelt '@'), and
# <OUTPUT_DIR>/gate-manifest.json with <OUTPUT_DIR>/gate-report.txt (`archdb gate-report`).
include_guard(GLOBAL)
set(ARCHDB_GATE_DIR "${CMAKE_CURRENT_LIST_DIR}")

function(archdb_add_gated_kernels name)
  cmake_parse_arguments(PARSE_ARGV 1 G "ALLOW_UNVALIDATED"
    "SOURCE_DIR;COMPILER;FLAVOR;ARCHDB;OBJDUMP;OUTPUT_DIR"
    "MANIFESTS;TARGETS;ARCHDB_ARGS;COMPILE_FLAGS;INCLUDE_DIRS;DEPENDS")
  if(G_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "archdb_add_gated_kernels(${name}): unknown arguments: ${G_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT G_MANIFESTS)
    message(FATAL_ERROR "archdb_add_gated_kernels(${name}): no MANIFESTS")
  endif()
  if(NOT G_TARGETS)
    set(G_TARGETS gfx90a gfx942 gfx950 gfx1100 gfx1201 gfx1250)
  endif()
  foreach(target IN LISTS G_TARGETS)
    if(target MATCHES ":")
      # A processor with features (gfx1100:+wavefrontsize64) is decided as such and compiled with the clang
      # flag of each feature: only features the gate knows a flag for.
      string(REGEX REPLACE "^[^:]*:" "" features "${target}")
      string(REPLACE "," ";" features "${features}")
      foreach(feature IN LISTS features)
        if(NOT feature MATCHES "^(\\+wavefrontsize64|-wavefrontsize32|wavefrontsize64\\+|wavefrontsize32-)$")
          message(FATAL_ERROR "archdb_add_gated_kernels(${name}): TARGETS '${target}': the gate compiles the "
                              "features it knows a clang flag for (+wavefrontsize64: -mwavefrontsize64), not '${feature}'")
        endif()
      endforeach()
    endif()
  endforeach()
  if(NOT G_OUTPUT_DIR)
    set(G_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/${name}")
  endif()
  if(NOT G_COMPILE_FLAGS)
    set(G_COMPILE_FLAGS -x hip --cuda-device-only -nogpulib -nogpuinc -O3 -std=c++17)
  endif()
  set(archdb_dep "")
  if(NOT G_ARCHDB)
    if(TARGET archdb)
      set(G_ARCHDB archdb)
    elseif(TARGET archdb::archdb)
      set(G_ARCHDB archdb::archdb)
    else()
      message(FATAL_ERROR "archdb_add_gated_kernels(${name}): no ARCHDB given and no archdb target")
    endif()
  endif()
  if(TARGET ${G_ARCHDB})
    set(archdb_dep ${G_ARCHDB})
    set(G_ARCHDB "$<TARGET_FILE:${G_ARCHDB}>")
  endif()
  if(NOT G_COMPILER)
    if(CMAKE_HIP_COMPILER)
      set(G_COMPILER "${CMAKE_HIP_COMPILER}")
    else()
      set(majors ${ARCHDB_LLVM_VERSION_MAJOR} ${LLVM_VERSION_MAJOR})
      set(names "")
      foreach(m IN LISTS majors)
        list(APPEND names clang++-${m})
      endforeach()
      find_program(ARCHDB_GATE_CLANG NAMES ${names} clang++)
      if(NOT ARCHDB_GATE_CLANG)
        message(FATAL_ERROR "archdb_add_gated_kernels(${name}): no clang++ found; give COMPILER")
      endif()
      set(G_COMPILER "${ARCHDB_GATE_CLANG}")
    endif()
  endif()
  if(NOT G_OBJDUMP)
    get_filename_component(real_compiler "${G_COMPILER}" REALPATH)
    get_filename_component(compiler_dir "${real_compiler}" DIRECTORY)
    find_program(ARCHDB_GATE_OBJDUMP NAMES llvm-objdump HINTS "${compiler_dir}" NO_DEFAULT_PATH)
    if(NOT ARCHDB_GATE_OBJDUMP)
      find_program(ARCHDB_GATE_OBJDUMP NAMES llvm-objdump)
    endif()
    if(NOT ARCHDB_GATE_OBJDUMP)
      message(FATAL_ERROR "archdb_add_gated_kernels(${name}): no llvm-objdump found; give OBJDUMP")
    endif()
    set(G_OBJDUMP "${ARCHDB_GATE_OBJDUMP}")
  endif()
  set(include_flags "")
  foreach(dir IN LISTS G_INCLUDE_DIRS)
    list(APPEND include_flags "-I${dir}")
  endforeach()

  # The decision: one `archdb check` of every manifest on every target, each kernel's answers written to
  # .decisions/<kernel>.json (rewritten only when they change, so that a pair whose answer did not change is
  # not compiled again).
  set(decisions_dir "${G_OUTPUT_DIR}/.decisions")
  set(manifest_paths "")
  set(decision_files "")
  set(kernels_seen "")
  foreach(manifest IN LISTS G_MANIFESTS)
    get_filename_component(manifest "${manifest}" ABSOLUTE)
    file(READ "${manifest}" manifest_text)
    string(JSON kernel ERROR_VARIABLE err GET "${manifest_text}" kernel)
    if(err)
      message(FATAL_ERROR "archdb_add_gated_kernels(${name}): ${manifest}: no 'kernel': ${err}")
    endif()
    if(kernel IN_LIST kernels_seen)
      message(FATAL_ERROR "archdb_add_gated_kernels(${name}): kernel '${kernel}' is named by two manifests")
    endif()
    list(APPEND kernels_seen "${kernel}")
    list(APPEND manifest_paths "${manifest}")
    list(APPEND decision_files "${decisions_dir}/${kernel}.json")
  endforeach()
  string(REPLACE ";" "\n" manifest_lines "${manifest_paths}")
  file(GENERATE OUTPUT "${G_OUTPUT_DIR}/.steps/manifests.txt" CONTENT "${manifest_lines}\n")
  file(GENERATE OUTPUT "${G_OUTPUT_DIR}/.steps/decide.cmake" CONTENT
"set(ARCHDB [==[${G_ARCHDB}]==])
set(ARCHDB_ARGS [==[${G_ARCHDB_ARGS}]==])
set(MANIFEST_LIST [==[${G_OUTPUT_DIR}/.steps/manifests.txt]==])
set(TARGETS [==[${G_TARGETS}]==])
set(COMPILER [==[${G_COMPILER}]==])
set(FLAVOR [==[${G_FLAVOR}]==])
set(DECISIONS_DIR [==[${decisions_dir}]==])
")
  add_custom_command(
    OUTPUT "${decisions_dir}/.stamp" ${decision_files}
    COMMAND "${CMAKE_COMMAND}" -DCONFIG=${G_OUTPUT_DIR}/.steps/decide.cmake -P "${ARCHDB_GATE_DIR}/ArchdbGateDecide.cmake"
    DEPENDS ${manifest_paths} "${ARCHDB_GATE_DIR}/ArchdbGateDecide.cmake" ${archdb_dep} ${G_DEPENDS}
    COMMENT "archdb gate: ${name}: deciding every kernel on every target"
    VERBATIM)

  set(results "")
  foreach(manifest IN LISTS G_MANIFESTS)
    get_filename_component(manifest "${manifest}" ABSOLUTE)
    file(READ "${manifest}" manifest_text)
    string(JSON kernel GET "${manifest_text}" kernel)
    string(JSON source ERROR_VARIABLE err GET "${manifest_text}" source)
    if(err)
      message(FATAL_ERROR "archdb_add_gated_kernels(${name}): ${manifest}: no 'source': ${err}")
    endif()
    set(define_flags "")
    string(JSON ndefines ERROR_VARIABLE err LENGTH "${manifest_text}" defines)
    if(NOT err AND ndefines GREATER 0)
      math(EXPR last "${ndefines} - 1")
      foreach(i RANGE ${last})
        string(JSON d GET "${manifest_text}" defines ${i})
        list(APPEND define_flags "-D${d}")
      endforeach()
    endif()
    set(source_dir "${G_SOURCE_DIR}")
    if(NOT source_dir)
      get_filename_component(source_dir "${manifest}" DIRECTORY)
      get_filename_component(source_dir "${source_dir}" DIRECTORY)
    endif()
    set(source_path "${source_dir}/${source}")
    if(NOT EXISTS "${source_path}")
      message(FATAL_ERROR "archdb_add_gated_kernels(${name}): ${manifest}: source '${source_path}' does not exist")
    endif()
    foreach(target IN LISTS G_TARGETS)
      # A target's files are named by it, ':' spelt '@' (make takes ':' in a file name for a rule's).
      string(REPLACE ":" "@" target_stem "${target}")
      set(out_dir "${G_OUTPUT_DIR}/${kernel}")
      set(config "${G_OUTPUT_DIR}/.steps/${kernel}.${target_stem}.cmake")
      set(result "${out_dir}/${target_stem}.result.json")
      file(GENERATE OUTPUT "${config}" CONTENT
"set(ARCHDB [==[${G_ARCHDB}]==])
set(ARCHDB_ARGS [==[${G_ARCHDB_ARGS}]==])
set(KERNEL [==[${kernel}]==])
set(MANIFEST [==[${manifest}]==])
set(SOURCE [==[${source_path}]==])
set(TARGET [==[${target}]==])
set(TARGET_STEM [==[${target_stem}]==])
set(DECISION [==[${decisions_dir}/${kernel}.json]==])
set(COMPILER [==[${G_COMPILER}]==])
set(FLAVOR [==[${G_FLAVOR}]==])
set(FLAGS [==[${G_COMPILE_FLAGS};${include_flags};${define_flags}]==])
set(OBJDUMP [==[${G_OBJDUMP}]==])
set(OUT_DIR [==[${out_dir}]==])
set(DEPENDS_FILES [==[${G_DEPENDS}]==])
set(ALLOW_UNVALIDATED ${G_ALLOW_UNVALIDATED})
")
      add_custom_command(
        OUTPUT "${result}"
        COMMAND "${CMAKE_COMMAND}" -DCONFIG=${config} -P "${ARCHDB_GATE_DIR}/ArchdbGateStep.cmake"
        DEPENDS "${decisions_dir}/${kernel}.json" "${manifest}" "${source_path}"
                "${ARCHDB_GATE_DIR}/ArchdbGateStep.cmake" ${archdb_dep} ${G_DEPENDS}
        COMMENT "archdb gate: ${kernel} on ${target}"
        VERBATIM)
      list(APPEND results "${result}")
    endforeach()
  endforeach()

  set(gate_manifest "${G_OUTPUT_DIR}/gate-manifest.json")
  file(GENERATE OUTPUT "${G_OUTPUT_DIR}/.steps/manifest.cmake" CONTENT
"set(RESULTS [==[${results}]==])
set(OUT_DIR [==[${G_OUTPUT_DIR}]==])
set(COMPILER [==[${G_COMPILER}]==])
set(ARCHDB [==[${G_ARCHDB}]==])
")
  add_custom_command(
    OUTPUT "${gate_manifest}"
    COMMAND "${CMAKE_COMMAND}" -DCONFIG=${G_OUTPUT_DIR}/.steps/manifest.cmake -P "${ARCHDB_GATE_DIR}/ArchdbGateManifest.cmake"
    DEPENDS ${results} "${ARCHDB_GATE_DIR}/ArchdbGateManifest.cmake"
    COMMENT "archdb gate: ${name} gate manifest"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS "${gate_manifest}")
  set_property(TARGET ${name} PROPERTY ARCHDB_GATE_MANIFEST "${gate_manifest}")
endfunction()
