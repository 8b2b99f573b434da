# ArchdbGateStep.cmake — one (kernel variant, target) of the build gate, run with
# `cmake -DCONFIG=<step file> -P ArchdbGateStep.cmake` (ArchdbGate.cmake writes the step file):
#   1. the pair's answer, decided before compiling by the gate's one `archdb check` of every pair
#      (ArchdbGateDecide.cmake, read from DECISION): not cleared → no code object; the build log says why;
#   2. cleared: the device IR is compiled and checked again against the manifest (drift fails the build; clang
#      refusing a builtin for the target refuses the pair, naming clang's words);
#   3. the code object is compiled (with the backend's resource remarks), disassembled with llvm-objdump,
#      and reported by `archdb code-object` (scratch must be 0);
#   4. <target>.result.json records the outcome for the gate manifest (a target's files spell ':' as '@').
cmake_minimum_required(VERSION 3.20)
include("${CONFIG}")

function(json_string out value)
  string(REPLACE "\\" "\\\\" value "${value}")
  string(REPLACE "\"" "\\\"" value "${value}")
  string(REPLACE "\n" "\\n" value "${value}")
  string(REPLACE "\t" "\\t" value "${value}")
  set(${out} "\"${value}\"" PARENT_SCOPE)
endfunction()

# The pair is not built: its record (with the check that said so) and the inputs that decided it.
function(record_not_built check)
  file(WRITE "${base}.result.json"
    "{\"kernel\": ${kernel_json}, \"target\": ${target_json}, \"built\": false, \"keys\": ${keys_json}, \"check\": ${check}}\n")
  file(WRITE "${base}.inputs" "${inputs_digest}")
endfunction()

function(gate_fail what)
  message(FATAL_ERROR "archdb gate: ${KERNEL} on ${TARGET}: ${what}")
endfunction()

if(NOT TARGET_STEM)
  message(FATAL_ERROR "archdb gate: ${CONFIG} sets no TARGET_STEM (the name of ${TARGET}'s files)")
endif()
file(MAKE_DIRECTORY "${OUT_DIR}")
set(base "${OUT_DIR}/${TARGET_STEM}")
if(FLAVOR)
  set(flavor_args --flavor "${FLAVOR}")
else()
  set(flavor_args --compiler "${COMPILER}")
endif()

# 1. The answer decided before compiling.
if(NOT EXISTS "${DECISION}")
  gate_fail("no decision at ${DECISION} (the gate's archdb check did not answer this kernel)")
endif()
file(READ "${DECISION}" decisions)
string(JSON check_json ERROR_VARIABLE err GET "${decisions}" "${TARGET}")
if(err)
  gate_fail("${DECISION} has no answer for ${TARGET}: ${err}")
endif()

# GNU make has no restat: once the gate's one decision has run (a manifest changed), make runs every step,
# though most answers are as they were. A step whose inputs are those of its last run — its answer, the
# manifest, the source and the files it DEPENDS on, the flags, the tools and this script — keeps what that
# run made instead of compiling again.
set(inputs "${check_json}\n${FLAGS}\n${ALLOW_UNVALIDATED}\n${COMPILER}\n${OBJDUMP}\n${ARCHDB}\n${ARCHDB_ARGS}\n")
foreach(tool IN ITEMS "${COMPILER}" "${ARCHDB}")
  file(TIMESTAMP "${tool}" stamp "%s" UTC)
  string(APPEND inputs "${tool} ${stamp}\n")
endforeach()
foreach(input IN LISTS MANIFEST SOURCE DEPENDS_FILES CMAKE_CURRENT_LIST_FILE)
  if(EXISTS "${input}" AND NOT IS_DIRECTORY "${input}")
    file(SHA256 "${input}" digest)
  else()
    set(digest missing)
  endif()
  string(APPEND inputs "${input} ${digest}\n")
endforeach()
string(SHA256 inputs_digest "${inputs}")
if(EXISTS "${base}.result.json" AND EXISTS "${base}.inputs")
  file(READ "${base}.inputs" last_digest)
  if(last_digest STREQUAL inputs_digest)
    file(TOUCH "${base}.result.json")
    return()
  endif()
endif()
file(REMOVE "${base}.hsaco" "${base}.ll" "${base}.s" "${base}.remarks" "${base}.report.json" "${base}.result.json"
     "${base}.inputs")
string(JSON verdict GET "${check_json}" verdict)
string(JSON headline GET "${check_json}" message)
# The target as LLVM names it (TARGET may be an alias: fiji is gfx803; features are those that differ from the
# processor's own): recorded. Its processor is compiled for, with the clang flag of each feature.
string(JSON canonical_target GET "${check_json}" target)
json_string(kernel_json "${KERNEL}")
json_string(target_json "${canonical_target}")
string(REGEX REPLACE ":.*" "" processor "${canonical_target}")
set(feature_flags "")
set(mattr "")
if(canonical_target MATCHES ":(.*)$")
  set(mattr "--mattr=${CMAKE_MATCH_1}")
  string(REPLACE "," ";" features "${CMAKE_MATCH_1}")
  foreach(feature IN LISTS features)
    if(feature STREQUAL "+wavefrontsize64")
      list(APPEND feature_flags -mwavefrontsize64)
    elseif(NOT feature STREQUAL "-wavefrontsize32")  # what +wavefrontsize64 implies
      gate_fail("no clang flag the gate knows compiles feature '${feature}'")
    endif()
  endforeach()
endif()
# The keys the pair was checked for (the manifest's), recorded with built and refused pairs alike.
file(READ "${MANIFEST}" manifest_text)
string(JSON keys_json ERROR_VARIABLE err GET "${manifest_text}" keys)
if(err)
  gate_fail("${MANIFEST}: no 'keys': ${err}")
endif()

set(build FALSE)
if(verdict STREQUAL "cleared")
  set(build TRUE)
elseif(verdict STREQUAL "unvalidated" AND ALLOW_UNVALIDATED)
  set(build TRUE)
  message(WARNING "archdb gate: building without validation: ${headline}")
endif()
if(NOT build)
  message(NOTICE "archdb gate: ${headline}")
  record_not_built("${check_json}")
  return()
endif()

# 2. The device IR, checked again: an intrinsic the manifest does not list is drift.
execute_process(
  COMMAND "${COMPILER}" ${FLAGS} --offload-arch=${processor} ${feature_flags} -S -emit-llvm -o "${base}.ll" "${SOURCE}"
  ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  # Clang refusing a builtin for the target ("needs target feature wavefrontsize32": the source calls a form
  # only another mode has, which the manifest's keys do not say) refuses the pair, as the front end would have
  # before compiling: no code object, the build goes on. Any other error fails it.
  string(REGEX MATCH "error: [^\n]*needs target feature[^\n]*" refusal "${err}")
  if(refusal)
    set(words "${KERNEL} on ${TARGET}: clang refuses a builtin of ${SOURCE} for ${TARGET}: ${refusal}")
    message(NOTICE "archdb gate: refused: ${words}")
    json_string(words_json "refused: ${words}")
    string(JSON check_json SET "${check_json}" verdict "\"refused\"")
    string(JSON check_json SET "${check_json}" message "${words_json}")
    record_not_built("${check_json}")
    return()
  endif()
  gate_fail("compiling device IR failed:\n${err}")
endif()
execute_process(
  COMMAND "${ARCHDB}" ${ARCHDB_ARGS} check --manifest "${MANIFEST}" --ir "${base}.ll" --target "${TARGET}" ${flavor_args} --json
  OUTPUT_VARIABLE ir_json ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc MATCHES "^[012]$")
  gate_fail("archdb check of the device IR failed (exit ${rc}): ${err}")
endif()
string(JSON ndrift LENGTH "${ir_json}" drift)
if(ndrift GREATER 0)
  set(lines "")
  math(EXPR last "${ndrift} - 1")
  foreach(i RANGE ${last})
    string(JSON d GET "${ir_json}" drift ${i})
    string(APPEND lines "\n  ${d}")
  endforeach()
  gate_fail("stale manifest ${MANIFEST}: the device IR uses what it does not list:${lines}")
endif()

# 3. The code object, its disassembly and its report.
execute_process(
  COMMAND "${COMPILER}" ${FLAGS} --offload-arch=${processor} ${feature_flags} --no-gpu-bundle-output
          -Rpass-analysis=kernel-resource-usage -o "${base}.hsaco" "${SOURCE}"
  ERROR_VARIABLE remarks RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  gate_fail("compiling the code object failed:\n${remarks}")
endif()
file(WRITE "${base}.remarks" "${remarks}")
execute_process(COMMAND "${OBJDUMP}" -d --mcpu=${processor} ${mattr} "${base}.hsaco"
  OUTPUT_FILE "${base}.s" ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  gate_fail("llvm-objdump failed: ${err}")
endif()
execute_process(
  COMMAND "${ARCHDB}" code-object "${base}.hsaco" --remarks "${base}.remarks" --disassembly "${base}.s" --json --require-no-scratch
  OUTPUT_VARIABLE report ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  string(STRIP "${err}" err)
  gate_fail("${err}")
endif()
file(WRITE "${base}.report.json" "${report}")
get_filename_component(kernel_dir "${OUT_DIR}" NAME)
json_string(object_json "${kernel_dir}/${TARGET_STEM}.hsaco")
message(STATUS "archdb gate: ${headline}")
file(WRITE "${base}.result.json"
  "{\"kernel\": ${kernel_json}, \"target\": ${target_json}, \"built\": true, \"keys\": ${keys_json}, \"code_object\": ${object_json}, \"check\": ${check_json}, \"report\": ${report}}\n")
file(WRITE "${base}.inputs" "${inputs_digest}")
