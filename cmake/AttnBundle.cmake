# attn_add_bundle: compile attention variants ahead of time, at build time.
#
#   attn_add_bundle(TARGET <name> GRID <grid.json> TARGETS <target>...
#                   [OUTPUT <dir>] [OPTIONS <attn-compile flag>...]
#                   [SHARDS <n>] [SIGN_KEY <NAME.key>])
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
# SHARDS <n> (n > 1) cuts the grid into n slices (attn-compile --shard
# I/n), one build command each, so that Ninja (and any distributed build
# that runs its commands) compiles them in parallel, then merges them with
# attn-bundle merge into the bundle one attn-compile would write, byte for
# byte. The shards live beside the bundle, in <dir>.shards/.
#
# SIGN_KEY <NAME.key> signs the bundle's manifest with that Ed25519 secret
# key (attn-bundle keygen -o NAME; attn-compile --sign-key, or attn-bundle
# merge --sign-key for SHARDS, where the shards stay unsigned); the bundle
# is rebuilt when the key file changes. Engines trust NAME.pub
# (Session::open's BundleTrust, --trust-key).
#
# attn-compile is the `attn-compile` target inside the attn build, else
# ATTN_COMPILE_EXECUTABLE (found next to the installed package or on PATH);
# attn-bundle likewise (ATTN_BUNDLE_EXECUTABLE).
include_guard(GLOBAL)

# The tool `name`: its target inside the attn build, else the executable
# found next to the installed package or on PATH (cached in `cacheVar`).
# Sets `outVar` to what a command runs and `depVar` to what it depends on.
function(_attn_find_tool name cacheVar outVar depVar)
  if(TARGET ${name})
    set(${outVar} $<TARGET_FILE:${name}> PARENT_SCOPE)
    set(${depVar} ${name} PARENT_SCOPE)
    return()
  endif()
  find_program(${cacheVar} ${name} HINTS ${_ATTN_COMPILE_HINT}
    DOC "${name}, which attn_add_bundle runs")
  if(NOT ${cacheVar})
    message(FATAL_ERROR "attn_add_bundle: ${name} not found; set ${cacheVar}")
  endif()
  set(${outVar} ${${cacheVar}} PARENT_SCOPE)
  set(${depVar} ${${cacheVar}} PARENT_SCOPE)
endfunction()

function(attn_add_bundle)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "TARGET;GRID;OUTPUT;SHARDS;SIGN_KEY"
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

  _attn_find_tool(attn-compile ATTN_COMPILE_EXECUTABLE compiler compilerDep)
  if(ARG_SHARDS AND NOT ARG_SHARDS MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "attn_add_bundle(${ARG_TARGET}): SHARDS must be a "
                        "positive count, got '${ARG_SHARDS}'")
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
  set(sign)
  set(signDep)
  if(ARG_SIGN_KEY)
    get_filename_component(signDep "${ARG_SIGN_KEY}" ABSOLUTE
      BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set(sign --sign-key "${signDep}")
  endif()

  # attn-compile writes the manifest after the kernel files, so the manifest
  # stands for the whole bundle. A fresh directory keeps kernels of variants
  # since removed from the grid out of it.
  if(NOT ARG_SHARDS OR ARG_SHARDS EQUAL 1)
    add_custom_command(
      OUTPUT "${out}/manifest.json"
      COMMAND ${CMAKE_COMMAND} -E rm -rf "${out}"
      COMMAND ${compiler} --grid "${grid}" --targets=${targets} ${ARG_OPTIONS}
              ${sign} -o "${out}"
      DEPENDS "${grid}" ${compilerDep} ${signDep}
      COMMENT "attn-compile ${ARG_TARGET}: ${ARG_GRID} for ${targets}"
      VERBATIM)
  else()
    _attn_find_tool(attn-bundle ATTN_BUNDLE_EXECUTABLE merger mergerDep)
    set(shardManifests)
    set(shardDirs)
    math(EXPR last "${ARG_SHARDS} - 1")
    foreach(i RANGE ${last})
      set(shard "${out}.shards/${i}.attnb")
      add_custom_command(
        OUTPUT "${shard}/manifest.json"
        COMMAND ${CMAKE_COMMAND} -E rm -rf "${shard}"
        COMMAND ${compiler} --grid "${grid}" --targets=${targets}
                ${ARG_OPTIONS} --shard ${i}/${ARG_SHARDS} -q -o "${shard}"
        DEPENDS "${grid}" ${compilerDep}
        COMMENT "attn-compile ${ARG_TARGET}: shard ${i} of ${ARG_SHARDS}"
        VERBATIM)
      list(APPEND shardManifests "${shard}/manifest.json")
      list(APPEND shardDirs "${shard}")
    endforeach()
    add_custom_command(
      OUTPUT "${out}/manifest.json"
      COMMAND ${CMAKE_COMMAND} -E rm -rf "${out}"
      COMMAND ${merger} merge -o "${out}" ${sign} ${shardDirs}
      DEPENDS ${shardManifests} ${mergerDep} ${signDep}
      COMMENT "attn-bundle merge ${ARG_TARGET}: ${ARG_SHARDS} shards"
      VERBATIM)
  endif()
  add_custom_target(${ARG_TARGET} ALL DEPENDS "${out}/manifest.json")
  set_target_properties(${ARG_TARGET} PROPERTIES ATTN_BUNDLE_DIR "${out}")
endfunction()
