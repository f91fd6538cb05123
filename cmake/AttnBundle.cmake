# attn_add_bundle: compile attention variants ahead of time, at build time.
#
#   attn_add_bundle(TARGET <name> GRID <grid.json> TARGETS <target>...
#                   [OUTPUT <dir>] [OPTIONS <attn-compile flag>...])
#
# Adds a custom target <name> (built by `all`) that runs
#   attn-compile --grid <grid.json> --targets=<t1>,<t2> <options> -o <dir>
# (OPTIONS, e.g. --subgroup-size=0 to compile for this machine's Vulkan
# device)
# with <dir> defaulting to ${CMAKE_CURRENT_BINARY_DIR}/<name>.attnb, and
# reruns it when the grid file or attn-compile changes. Targets are those of
# attn-compile --targets (spirv, ptx, msl, tt, cpu). TARGETS cpu builds the
# shared objects a CPU Session serves (attn::AttnCpuDevice), one per kernel
# and ISA level: OPTIONS --cpu-isa=host keeps only the level of the machine
# that builds, e.g.
#   attn_add_bundle(TARGET kernels GRID grid.json TARGETS cpu
#                   OPTIONS --cpu-isa=host)
# attn-compile links them with ld.lld: beside the LLVM it was built with,
# else on PATH. The bundle's path is
# the target's ATTN_BUNDLE_DIR property, e.g. for a compile definition:
#   target_compile_definitions(engine PRIVATE
#     BUNDLE_DIR="$<TARGET_PROPERTY:kernels,ATTN_BUNDLE_DIR>")
#
# attn-compile is the `attn-compile` target inside the attn build, else
# ATTN_COMPILE_EXECUTABLE (found next to the installed package or on PATH).
include_guard(GLOBAL)

function(attn_add_bundle)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "TARGET;GRID;OUTPUT"
    "TARGETS;OPTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "attn_add_bundle: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  foreach(required TARGET GRID TARGETS)
    if(NOT ARG_${required})
      message(FATAL_ERROR "attn_add_bundle: ${required} is required")
    endif()
  endforeach()
  # attn-compile checks the target names against its table (core/Target.h),
  # so an unknown one fails the bundle's build with the names it knows.

  if(TARGET attn-compile)
    set(compiler $<TARGET_FILE:attn-compile>)
    set(compilerDep attn-compile)
  else()
    find_program(ATTN_COMPILE_EXECUTABLE attn-compile
      HINTS ${_ATTN_COMPILE_HINT}
      DOC "attn-compile, which attn_add_bundle runs")
    if(NOT ATTN_COMPILE_EXECUTABLE)
      message(FATAL_ERROR "attn_add_bundle(${ARG_TARGET}): attn-compile not "
                          "found; set ATTN_COMPILE_EXECUTABLE")
    endif()
    set(compiler ${ATTN_COMPILE_EXECUTABLE})
    set(compilerDep ${ATTN_COMPILE_EXECUTABLE})
  endif()

  get_filename_component(grid "${ARG_GRID}" ABSOLUTE
    BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(ARG_OUTPUT)
    get_filename_component(out "${ARG_OUTPUT}" ABSOLUTE
      BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  else()
    set(out "${CMAKE_CURRENT_BINARY_DIR}/${ARG_TARGET}.attnb")
  endif()
  list(JOIN ARG_TARGETS "," targets)

  # attn-compile writes the manifest after the kernel files, so the manifest
  # stands for the whole bundle. A fresh directory keeps kernels of variants
  # since removed from the grid out of it.
  add_custom_command(
    OUTPUT "${out}/manifest.json"
    COMMAND ${CMAKE_COMMAND} -E rm -rf "${out}"
    COMMAND ${compiler} --grid "${grid}" --targets=${targets} ${ARG_OPTIONS}
            -o "${out}"
    DEPENDS "${grid}" ${compilerDep}
    COMMENT "attn-compile ${ARG_TARGET}: ${ARG_GRID} for ${targets}"
    VERBATIM)
  add_custom_target(${ARG_TARGET} ALL DEPENDS "${out}/manifest.json")
  set_target_properties(${ARG_TARGET} PROPERTIES ATTN_BUNDLE_DIR "${out}")
endfunction()
