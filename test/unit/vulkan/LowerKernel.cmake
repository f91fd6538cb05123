# Lowers one test kernel (a gpu.module in MLIR) to a SPIR-V binary with the
# upstream tools, as attn's own SPIR-V lowering does in process:
#
#   cmake -DMLIR_OPT=... -DMLIR_TRANSLATE=... [-DSPIRV_VAL=...]
#         -DINPUT=k.mlir -DOUTPUT=k.spv -P LowerKernel.cmake
#
# Also writes OUTPUT.mlir, the spirv.module that was serialized.

set(pipeline "builtin.module(convert-math-to-spirv, convert-gpu-to-spirv, spirv.module(spirv-lower-abi-attrs, spirv-update-vce))")
execute_process(
  COMMAND ${MLIR_OPT} ${INPUT} --pass-pipeline=${pipeline}
  OUTPUT_VARIABLE lowered
  ERROR_VARIABLE errors
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mlir-opt failed on ${INPUT}:\n${errors}")
endif()

# mlir-translate --serialize-spirv wants a spirv.module as the top-level op,
# but convert-gpu-to-spirv puts it beside the gpu.module, inside the
# builtin.module. The printer indents it by two spaces, so it runs from
# "  spirv.module" to the first line that is "  }".
string(FIND "${lowered}" "\n  spirv.module" begin)
if(begin EQUAL -1)
  message(FATAL_ERROR "no spirv.module in the lowering of ${INPUT}")
endif()
math(EXPR begin "${begin} + 1")
string(SUBSTRING "${lowered}" ${begin} -1 rest)
string(FIND "${rest}" "\n  }\n" end)
if(end EQUAL -1)
  message(FATAL_ERROR "unterminated spirv.module in the lowering of ${INPUT}")
endif()
math(EXPR end "${end} + 4")
string(SUBSTRING "${rest}" 0 ${end} spirvModule)
file(WRITE ${OUTPUT}.mlir "${spirvModule}")

execute_process(
  COMMAND ${MLIR_TRANSLATE} --no-implicit-module --serialize-spirv
          ${OUTPUT}.mlir -o ${OUTPUT}
  ERROR_VARIABLE errors
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUTPUT})
  message(FATAL_ERROR "mlir-translate failed on ${OUTPUT}.mlir:\n${errors}")
endif()

if(SPIRV_VAL)
  execute_process(
    COMMAND ${SPIRV_VAL} --target-env vulkan1.1 ${OUTPUT}
    OUTPUT_VARIABLE out
    ERROR_VARIABLE errors
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    file(REMOVE ${OUTPUT})
    message(FATAL_ERROR "spirv-val rejects ${OUTPUT}:\n${out}${errors}")
  endif()
endif()
