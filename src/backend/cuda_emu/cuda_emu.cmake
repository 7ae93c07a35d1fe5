# The test-only emulated CUDA backend (docs/CUDA_EMULATOR.md): the CUDA backend's own sources,
# rewritten for the host compiler, over a CPU launch model; no nvcc, no GPU, no cudart or cuBLAS.
# Gives the library variant tickgrad_cuda_emu and its tests (test_cuda_emu, test_stage_cuda_emu, ...).
enable_language(CXX)
set(TG_EMU_DIR ${CMAKE_SOURCE_DIR}/src/backend/cuda_emu)
set(TG_EMU_GEN ${CMAKE_BINARY_DIR}/cuda_emu/src) # the rewritten copies, under their own paths
file(MAKE_DIRECTORY ${TG_EMU_GEN}/backend/cuda ${CMAKE_BINARY_DIR}/cuda_emu/tests)

# The rewriter is a small C program built first (no scripting language needed at build time).
add_executable(tg_emu_rewrite ${TG_EMU_DIR}/emu_rewrite.c)

# tg_emu_rewritten(VAR DIR inputs...): rewritten copies of inputs in DIR (a .cu becomes .cu.cpp, compiled as C++).
function(tg_emu_rewritten var dir)
  set(outs)
  foreach(in ${ARGN})
    get_filename_component(name ${in} NAME)
    if(name MATCHES "\\.cu$")
      set(out ${dir}/${name}.cpp)
    else()
      set(out ${dir}/${name})
    endif()
    add_custom_command(OUTPUT ${out} COMMAND tg_emu_rewrite ${in} ${out} DEPENDS tg_emu_rewrite ${in}
                       COMMENT "cuda_emu: rewriting ${name}" VERBATIM)
    list(APPEND outs ${out})
  endforeach()
  set(${var} ${outs} PARENT_SCOPE)
endfunction()

file(GLOB TG_EMU_CUDA_INPUTS CONFIGURE_DEPENDS src/backend/cuda/*.cu src/backend/cuda/*.cuh src/backend/cuda/*.h)
tg_emu_rewritten(TG_EMU_REWRITTEN ${TG_EMU_GEN}/backend/cuda ${TG_EMU_CUDA_INPUTS})

# Flags for everything compiled as emulated device code. __CUDACC__: the sources' device paths (TG_HD,
# fault reporting) are the ones compiled. No fused multiply-add contraction: each product and sum
# rounds separately, as the kernels ask of nvcc with __fmul_rn and friends.
set(TG_EMU_CXX_FLAGS -D__CUDACC__ -std=c++17 -ffp-contract=off -fno-math-errno -Wall -Wextra -Wno-unused-function
    -Wno-unused-parameter)
if(TG_SANITIZE)
  list(APPEND TG_EMU_CXX_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
endif()
if(TG_WERROR)
  list(APPEND TG_EMU_CXX_FLAGS -Werror)
endif()

# The launch model, runtime and reference cuBLAS.
add_library(tg_cuda_emu_rt STATIC ${TG_EMU_DIR}/emu_block.cpp ${TG_EMU_DIR}/emu_fiber.cpp ${TG_EMU_DIR}/emu_runtime.cpp
            ${TG_EMU_DIR}/emu_cublas.cpp)
target_include_directories(tg_cuda_emu_rt PUBLIC ${TG_EMU_DIR}/include PRIVATE ${TG_EMU_DIR})
target_compile_options(tg_cuda_emu_rt PRIVATE ${TG_EMU_CXX_FLAGS})
target_link_libraries(tg_cuda_emu_rt PUBLIC Threads::Threads)

tg_backend_list(${CMAKE_BINARY_DIR}/cuda_emu/generated cpu cuda)
add_library(tickgrad_cuda_emu STATIC $<TARGET_OBJECTS:tickgrad_common> ${TG_BACKEND_VARIANT_SOURCES}
            ${TG_EMU_REWRITTEN})
# The shim folder comes first: its cuda_runtime.h and cublas_v2.h stand in for the toolkit's, and the
# rewritten backend headers shadow the originals.
target_include_directories(tickgrad_cuda_emu PUBLIC include PRIVATE ${TG_EMU_DIR}/include ${TG_EMU_GEN} src
                           ${TG_CBLAS_INCLUDE} ${CMAKE_BINARY_DIR}/cuda_emu/generated)
# TG_CUBLAS_LINKED: the backend takes the emulator's cuBLAS functions as linked instead of loading libcublas.
target_compile_definitions(tickgrad_cuda_emu PRIVATE TG_VERSION="${PROJECT_VERSION}" TG_HAVE_CUDA=1
                           TG_HAVE_MPI=${TG_HAVE_MPI} TG_HAVE_NCCL=0 TG_CUBLAS_LINKED=1)
target_compile_options(tickgrad_cuda_emu PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${TG_EMU_CXX_FLAGS}>)
target_link_libraries(tickgrad_cuda_emu PUBLIC ${TG_LIB_LINK} tg_cuda_emu_rt)

# Tests: the CUDA tests, linked against the emulator, expecting one device.
add_library(tg_test_support_emu STATIC ${TG_TEST_SUPPORT})
target_include_directories(tg_test_support_emu PUBLIC tests src)
target_link_libraries(tg_test_support_emu PUBLIC tickgrad_cuda_emu)
set(TG_EMU_TESTS test_cuda:test_cuda_emu test_stage_device:test_stage_cuda_emu test_op_coverage:test_op_coverage_emu
    test_cuda_optim:test_cuda_optim_emu test_bf16_mirror:test_bf16_mirror_emu)
foreach(pair ${TG_EMU_TESTS})
  string(REPLACE ":" ";" pair ${pair})
  list(GET pair 0 src)
  list(GET pair 1 name)
  add_executable(${name} tests/${src}.c)
  target_link_libraries(${name} PRIVATE tg_test_support_emu)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "TG_SOURCE_DIR=${CMAKE_SOURCE_DIR};TG_SHARED_DATA=${CMAKE_SOURCE_DIR}/../shared/data;TG_EXPECT_CUDA=1;TG_EXPECT_CUDA_DEVICE=1"
    SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS cuda_emu)
endforeach()

# The launch model itself: barriers, shuffles, atomics, misuse, capture and replay, the reference GEMM.
tg_emu_rewritten(TG_EMU_MODEL_TEST ${CMAKE_BINARY_DIR}/cuda_emu/tests ${CMAKE_SOURCE_DIR}/tests/cuda_emu/test_emu_model.cu)
add_executable(test_cuda_emu_model ${TG_EMU_MODEL_TEST})
target_compile_options(test_cuda_emu_model PRIVATE ${TG_EMU_CXX_FLAGS})
target_link_libraries(test_cuda_emu_model PRIVATE tg_cuda_emu_rt)
add_test(NAME test_cuda_emu_model COMMAND test_cuda_emu_model)
set_tests_properties(test_cuda_emu_model PROPERTIES TIMEOUT 120 LABELS cuda_emu)

# The rewriter refuses a launch form it does not know instead of compiling it into something else.
add_test(NAME cuda_emu_rewrite_rejects
         COMMAND tg_emu_rewrite ${CMAKE_SOURCE_DIR}/tests/cuda_emu/bad_launch.cu ${CMAKE_BINARY_DIR}/cuda_emu/tests/bad_launch.out)
set_tests_properties(cuda_emu_rewrite_rejects PROPERTIES PASS_REGULAR_EXPRESSION "bad_launch.cu:6: emu_rewrite: error"
                     LABELS cuda_emu)
