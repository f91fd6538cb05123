# AttnRuntime: the host API core (backends, metadata builders, registry). No
# MLIR or LLVM. Included from runtime/CMakeLists.txt, so paths are relative to
# runtime/.
add_library(AttnRuntime
  ${CMAKE_CURRENT_LIST_DIR}/Backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/Bundle.cpp
  ${CMAKE_CURRENT_LIST_DIR}/BundleExecutor.cpp
  ${CMAKE_CURRENT_LIST_DIR}/BundleWriter.cpp
  ${CMAKE_CURRENT_LIST_DIR}/Device.cpp
  ${CMAKE_CURRENT_LIST_DIR}/HostCalls.cpp
  ${CMAKE_CURRENT_LIST_DIR}/HostMemory.cpp
  ${CMAKE_CURRENT_LIST_DIR}/Metadata.cpp
  ${CMAKE_CURRENT_LIST_DIR}/MetadataBuilder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/Plan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/PlanRunner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/RecordedStep.cpp
  ${CMAKE_CURRENT_LIST_DIR}/Registry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/VariantQuery.cpp
)
# attn::Tensor / Status / DType and the metadata checks come from the
# reference library; the op functions are called only by the CPU executor.
target_link_libraries(AttnRuntime PUBLIC AttnReferenceOps Threads::Threads)
