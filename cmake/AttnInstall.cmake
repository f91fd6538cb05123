# Installs the MLIR-free runtime as a CMake package:
#
#   find_package(attn REQUIRED)
#   target_link_libraries(engine PRIVATE attn::AttnRuntime)
#   attn_add_bundle(TARGET kernels GRID grid.json TARGETS spirv)
#
# Headers go under include/attn/ keeping their repository paths, so hosts
# include them as the tree does: #include "runtime/host/Backend.h".
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ATTN_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/attn)
set(ATTN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/attn)

set(_attn_exported AttnCore AttnReferenceOps AttnTesting AttnRuntimeBundle
  AttnRuntimeDevice AttnRuntimeExecutor AttnRuntime AttnCpuDevice)
if(TARGET AttnVulkanDevice)
  list(APPEND _attn_exported AttnVulkanDevice)
endif()
if(TARGET AttnDLPack)
  list(APPEND _attn_exported AttnDLPack)
endif()
# AttnDevices (devices/Devices.h: openDevice / openSession by device type)
# links every device library this build has, so those go too.
foreach(device Cuda TT)
  if(TARGET Attn${device}Device)
    list(APPEND _attn_exported Attn${device}Device)
  endif()
endforeach()
if(TARGET AttnTTDevice)
  list(APPEND _attn_exported AttnTTEmulator)
endif()
list(APPEND _attn_exported AttnDevices)

# Every exported library reaches the headers through AttnCore.
target_include_directories(AttnCore PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
  $<INSTALL_INTERFACE:${ATTN_INSTALL_INCLUDEDIR}>)
# The headers are C++20 (std::span, designated initializers): each exported
# target says so, so a host that sets no CMAKE_CXX_STANDARD (GCC 12 defaults
# to C++17) compiles them at C++20.
foreach(target ${_attn_exported})
  target_compile_features(${target} PUBLIC cxx_std_20)
endforeach()

install(TARGETS attn-bundle-check RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ${_attn_exported} EXPORT attnTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

file(GLOB _attn_core_headers ${PROJECT_SOURCE_DIR}/core/*.h)
install(FILES ${_attn_core_headers}
  DESTINATION ${ATTN_INSTALL_INCLUDEDIR}/core)
file(GLOB _attn_reference_headers ${PROJECT_SOURCE_DIR}/reference/ops/*.h)
install(FILES ${_attn_reference_headers}
  DESTINATION ${ATTN_INSTALL_INCLUDEDIR}/reference/ops)
file(GLOB _attn_testing_headers ${PROJECT_SOURCE_DIR}/reference/testing/*.h)
install(FILES ${_attn_testing_headers}
  DESTINATION ${ATTN_INSTALL_INCLUDEDIR}/reference/testing)
# Each runtime layer's headers, but PlanJson.h (nlohmann/json) and StepLog.h,
# which are for the runtime's own sources.
foreach(layer bundle device executor host)
  file(GLOB _attn_layer_headers ${PROJECT_SOURCE_DIR}/runtime/${layer}/*.h)
  list(REMOVE_ITEM _attn_layer_headers
    ${PROJECT_SOURCE_DIR}/runtime/bundle/PlanJson.h
    ${PROJECT_SOURCE_DIR}/runtime/device/StepLog.h)
  install(FILES ${_attn_layer_headers}
    DESTINATION ${ATTN_INSTALL_INCLUDEDIR}/runtime/${layer})
endforeach()
if(TARGET AttnDLPack)
  install(FILES ${PROJECT_SOURCE_DIR}/runtime/device/dlpack/DLPack.h
    DESTINATION ${ATTN_INSTALL_INCLUDEDIR}/runtime/device/dlpack)
endif()
install(FILES
  ${PROJECT_SOURCE_DIR}/devices/cpu/CpuEmulator.h
  ${PROJECT_SOURCE_DIR}/devices/cpu/CpuKernelLoader.h
  ${PROJECT_SOURCE_DIR}/devices/cpu/CpuPlanDevice.h
  ${PROJECT_SOURCE_DIR}/devices/cpu/ThreadPool.h
  DESTINATION ${ATTN_INSTALL_INCLUDEDIR}/devices/cpu)
install(FILES
  ${PROJECT_SOURCE_DIR}/devices/DeviceFactory.h
  ${PROJECT_SOURCE_DIR}/devices/Devices.h
  DESTINATION ${ATTN_INSTALL_INCLUDEDIR}/devices)
if(TARGET AttnCudaDevice)
  install(FILES
    ${PROJECT_SOURCE_DIR}/devices/cuda/CudaPlanDevice.h
    DESTINATION ${ATTN_INSTALL_INCLUDEDIR}/devices/cuda)
endif()
if(TARGET AttnVulkanDevice)
  install(FILES
    ${PROJECT_SOURCE_DIR}/devices/vulkan/VulkanExecutor.h
    ${PROJECT_SOURCE_DIR}/devices/vulkan/VulkanPlanDevice.h
    DESTINATION ${ATTN_INSTALL_INCLUDEDIR}/devices/vulkan)
endif()

# The tools: attn-bundle (MLIR-free; it merges attn_add_bundle's shards)
# always, and when this build has the compiler attn-compile next to the
# package so attn_add_bundle finds it, attn-run and attn-diff beside it. They
# find libMLIR / libLLVM in LLVM's library directory and our shared
# libraries (the TT emulator) in ../lib, wherever the prefix is.
foreach(tool attn-compile attn-run attn-diff attn-bundle)
  if(TARGET ${tool})
    set_target_properties(${tool} PROPERTIES INSTALL_RPATH
      "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${LLVM_LIBRARY_DIR}")
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

# 0.x: a minor version may break the API.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/attnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)

# The installed package.
install(EXPORT attnTargets NAMESPACE attn::
  DESTINATION ${ATTN_INSTALL_CMAKEDIR})
set(ATTN_CONFIG_INCLUDEDIR ${ATTN_INSTALL_INCLUDEDIR})
set(ATTN_CONFIG_BINDIR ${CMAKE_INSTALL_BINDIR})
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/attnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/install/attnConfig.cmake
  INSTALL_DESTINATION ${ATTN_INSTALL_CMAKEDIR}
  PATH_VARS ATTN_CONFIG_INCLUDEDIR ATTN_CONFIG_BINDIR)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/install/attnConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/attnConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/AttnBundle.cmake
  ${CMAKE_CURRENT_LIST_DIR}/AttnSodium.cmake
  DESTINATION ${ATTN_INSTALL_CMAKEDIR})

# The build tree as a package too (-Dattn_DIR=<build>/cmake): the same
# targets, headers from the source tree, tools from <build>/bin.
export(EXPORT attnTargets NAMESPACE attn::
  FILE ${PROJECT_BINARY_DIR}/cmake/attnTargets.cmake)
set(ATTN_CONFIG_INCLUDEDIR ${PROJECT_SOURCE_DIR})
set(ATTN_CONFIG_BINDIR ${CMAKE_RUNTIME_OUTPUT_DIRECTORY})
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/attnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/attnConfig.cmake
  INSTALL_DESTINATION ${PROJECT_BINARY_DIR}/cmake
  INSTALL_PREFIX ${PROJECT_BINARY_DIR}
  PATH_VARS ATTN_CONFIG_INCLUDEDIR ATTN_CONFIG_BINDIR)
configure_file(${CMAKE_CURRENT_LIST_DIR}/AttnBundle.cmake
  ${PROJECT_BINARY_DIR}/cmake/AttnBundle.cmake COPYONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/AttnSodium.cmake
  ${PROJECT_BINARY_DIR}/cmake/AttnSodium.cmake COPYONLY)
