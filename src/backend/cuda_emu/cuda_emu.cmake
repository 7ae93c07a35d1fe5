# The test-only emulated CUDA backend (docs/CUDA_EMULATOR.md): the CUDA backend's own sources,
# rewritten for the host compiler, over a CPU launch model; no nvcc, no GPU, no cudart or cuBLAS.
# Gives the library variant tickgrad_cuda_emu and its tests (test_cuda_emu, test_stage_cuda_emu, ...).
enable_language(CXX)
set(TG_EMU_DIR ${CMAKE_SOURCE_DIR}/src/backend/cuda_emu)
set(TG_EMU_GEN ${CMAKE_BINARY_DIR}/cuda_emu/src) # the rewritten copies, under their own paths
file(MAKE_DIRECTORY ${TG_EMU_GEN}/backend/cuda)

# The rewriter is a small C program built first (no scripting language needed at build time).
add_executable(tg_emu_rewrite ${TG_EMU_DIR}/emu_rewrite.c)

file(GLOB TG_EMU_CUDA_INPUTS CONFIGURE_DEPENDS src/backend/cuda/*.cu src/backend/cuda/*.cuh src/backend/cuda/*.h)
set(TG_EMU_REWRITTEN)
foreach(in ${TG_EMU_CUDA_INPUTS})
  get_filename_component(name ${in} NAME)
  if(name MATCHES "\\.cu$")
    set(out ${TG_EMU_GEN}/backend/cuda/${name}.cpp) # compiled as C++
  else()
    set(out ${TG_EMU_GEN}/backend/cuda/${name})
  endif()
  add_custom_command(OUTPUT ${out} COMMAND tg_emu_rewrite ${in} ${out} DEPENDS tg_emu_rewrite ${in}
                     COMMENT "cuda_emu: rewriting ${name}" VERBATIM)
  list(APPEND TG_EMU_REWRITTEN ${out})
endforeach()

set(TG_EMU_MODEL ${TG_EMU_DIR}/emu_block.cpp ${TG_EMU_DIR}/emu_fiber.cpp ${TG_EMU_DIR}/emu_runtime.cpp
    ${TG_EMU_DIR}/emu_cublas.cpp)
add_library(tickgrad_cuda_emu STATIC $<TARGET_OBJECTS:tickgrad_common> ${TG_BACKEND_VARIANT_SOURCES}
            ${TG_EMU_REWRITTEN} ${TG_EMU_MODEL})
# The shim folder comes first: its cuda_runtime.h and cublas_v2.h stand in for the toolkit's, and the
# rewritten backend headers shadow the originals.
target_include_directories(tickgrad_cuda_emu PUBLIC include PRIVATE ${TG_EMU_DIR}/include ${TG_EMU_DIR} ${TG_EMU_GEN}
                           src ${TG_CBLAS_INCLUDE})
target_compile_definitions(tickgrad_cuda_emu PRIVATE TG_VERSION="${PROJECT_VERSION}" TG_HAVE_CUDA=1
                           TG_HAVE_MPI=${TG_HAVE_MPI} TG_HAVE_NCCL=0)
# __CUDACC__: the sources' device paths (TG_HD, fault reporting) are the ones compiled. No fused
# multiply-add contraction: each product and sum rounds separately, as the kernels ask of nvcc.
target_compile_options(tickgrad_cuda_emu PRIVATE
  $<$<COMPILE_LANGUAGE:CXX>:-D__CUDACC__ -std=c++17 -ffp-contract=off -fno-math-errno -Wall -Wextra
  -Wno-unused-function -Wno-unused-parameter>)
if(TG_SANITIZE)
  target_compile_options(tickgrad_cuda_emu PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined
                         -fno-omit-frame-pointer -fno-sanitize-recover=all>)
endif()
if(TG_WERROR)
  target_compile_options(tickgrad_cuda_emu PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
target_link_libraries(tickgrad_cuda_emu PUBLIC ${TG_LIB_LINK})

# Tests: the CUDA tests, linked against the emulator, expecting one device.
add_library(tg_test_support_emu STATIC ${TG_TEST_SUPPORT})
target_include_directories(tg_test_support_emu PUBLIC tests src)
target_link_libraries(tg_test_support_emu PUBLIC tickgrad_cuda_emu)
set(TG_EMU_TESTS test_cuda:test_cuda_emu test_stage_device:test_stage_cuda_emu test_op_coverage:test_op_coverage_emu)
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
