# kernels/variants.cmake — the bundled wgrad kernel variants, for the build gate: read from their manifests
# (kernels/manifests/*.json), so the manifests stay the one list. include() it from any CMakeLists; it sets
#   ARCHDB_KERNEL_VARIANTS               the variant names, sorted (wgrad_dw_mfma_f16, ...)
#   ARCHDB_KERNEL_<name>_SOURCE          the HIP source (absolute)
#   ARCHDB_KERNEL_<name>_DEFINES         the macros that select the variant (pass each as -D<macro>)
#   ARCHDB_KERNEL_<name>_KEYS            the archdb catalog keys its device IR uses
#   ARCHDB_KERNEL_<name>_MANIFEST        the manifest (absolute)
#   ARCHDB_KERNEL_<name>_TARGETS         the targets the variant is written for and compile-tested on; the
#                                        gate's verdicts from the measured columns decide where it is built
#   ARCHDB_KERNEL_{MFMA,TR16,PORTABLE}_TARGETS  those lists per data path: the one source, also of
#                                        wgrad_variants() in wgrad_problem.cpp (kernels/CMakeLists.txt passes
#                                        them to it)
#   ARCHDB_KERNEL_HIP_FLAGS              the clang++ flags every variant compiles with; add --offload-arch=<T>,
#                                        the -D defines, the source, and -o <file>.hsaco (or -S -emit-llvm)
set(ARCHDB_KERNELS_DIR ${CMAKE_CURRENT_LIST_DIR})
set(ARCHDB_KERNEL_HIP_FLAGS -x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O3 -std=c++17)

set(ARCHDB_KERNEL_MFMA_TARGETS gfx90a gfx942 gfx950)
set(ARCHDB_KERNEL_TR16_TARGETS gfx950)
set(ARCHDB_KERNEL_PORTABLE_TARGETS gfx908 gfx90a gfx942 gfx950 gfx1030 gfx1100 gfx1151 gfx1201 gfx1250
    gfx11-generic gfx12-generic)

file(GLOB _archdb_manifests CONFIGURE_DEPENDS ${ARCHDB_KERNELS_DIR}/manifests/*.json)
list(SORT _archdb_manifests)
set(ARCHDB_KERNEL_VARIANTS)
foreach(_m IN LISTS _archdb_manifests)
  file(READ ${_m} _json)
  string(JSON _name GET "${_json}" kernel)
  string(JSON _source GET "${_json}" source)
  foreach(_field defines keys)
    set(_list)
    string(JSON _n LENGTH "${_json}" ${_field})
    if(_n GREATER 0)
      math(EXPR _last "${_n} - 1")
      foreach(_i RANGE ${_last})
        string(JSON _item GET "${_json}" ${_field} ${_i})
        list(APPEND _list ${_item})
      endforeach()
    endif()
    string(TOUPPER ${_field} _FIELD)
    set(ARCHDB_KERNEL_${_name}_${_FIELD} ${_list})
  endforeach()
  set(ARCHDB_KERNEL_${_name}_SOURCE ${ARCHDB_KERNELS_DIR}/${_source})
  set(ARCHDB_KERNEL_${_name}_MANIFEST ${_m})
  if("WGRAD_USE_TR16" IN_LIST ARCHDB_KERNEL_${_name}_DEFINES)
    set(ARCHDB_KERNEL_${_name}_TARGETS ${ARCHDB_KERNEL_TR16_TARGETS})
  elseif(_source STREQUAL "wgrad_mfma.hip")
    set(ARCHDB_KERNEL_${_name}_TARGETS ${ARCHDB_KERNEL_MFMA_TARGETS})
  else()
    set(ARCHDB_KERNEL_${_name}_TARGETS ${ARCHDB_KERNEL_PORTABLE_TARGETS})
  endif()
  list(APPEND ARCHDB_KERNEL_VARIANTS ${_name})
endforeach()
