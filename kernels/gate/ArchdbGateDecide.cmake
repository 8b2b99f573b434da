# ArchdbGateDecide.cmake — the build gate's decision, run with `cmake -DCONFIG=<decide file> -P
# ArchdbGateDecide.cmake` (ArchdbGate.cmake writes the file): one `archdb check` of every kernel manifest on
# every target, each kernel's answers written to DECISIONS_DIR/<kernel>.json (archdb rewrites a file only when
# its answers change), then DECISIONS_DIR/.stamp. Exit 0, 1 and 2 of `archdb check` are answers (cleared,
# refused, unvalidated — each pair's is in its file); 3 and up fail the build with archdb's message.
cmake_minimum_required(VERSION 3.20)
include("${CONFIG}")

if(FLAVOR)
  set(flavor_args --flavor "${FLAVOR}")
else()
  set(flavor_args --compiler "${COMPILER}")
endif()
set(target_args "")
foreach(target IN LISTS TARGETS)
  list(APPEND target_args --target "${target}")
endforeach()
file(MAKE_DIRECTORY "${DECISIONS_DIR}")
execute_process(
  COMMAND "${ARCHDB}" ${ARCHDB_ARGS} check --manifest "@${MANIFEST_LIST}" ${target_args} ${flavor_args}
          --json-dir "${DECISIONS_DIR}"
  OUTPUT_QUIET ERROR_VARIABLE check_err RESULT_VARIABLE rc)
if(NOT rc MATCHES "^[012]$")
  string(STRIP "${check_err}" check_err)
  message(FATAL_ERROR "archdb gate: archdb check failed (exit ${rc}): ${check_err}")
endif()
file(TOUCH "${DECISIONS_DIR}/.stamp")
