# The installable library (docs/EMBEDDING.md), included by CMakeLists.txt when TG_INSTALL is on:
#   lib/libtickgrad.so.X.Y.Z (soname libtickgrad.so.X.Y while the major version is 0, libtickgrad.so.X after), which
#     links its own dependencies and exports only the public API: the functions and variables declared in
#     include/tickgrad/*.h (a version script written from the headers by tools/public-symbols.sh);
#   lib/libtickgrad.a, the same objects, for static linking (its dependencies: tickgrad.pc's Libs.private);
#   include/tickgrad/*.h; lib/pkgconfig/tickgrad.pc; lib/cmake/tickgrad/ (find_package(tickgrad): the imported
#     targets tickgrad::tickgrad, the shared library, and tickgrad::tickgrad_static);
#   bin/tickgrad, the command, when the build makes it (TG_BUILD_TESTS).
# Everything installed finds the rest relative to itself, so `cmake --install build --prefix P` may pick any P.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(TG_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}) # 0.x: a minor version may change the ABI
else()
  set(TG_SOVERSION ${PROJECT_VERSION_MAJOR})
endif()

file(GLOB TG_PUBLIC_HEADERS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/include/tickgrad/*.h)
set(TG_EXPORTS_MAP ${CMAKE_BINARY_DIR}/generated/tickgrad.map)
add_custom_command(OUTPUT ${TG_EXPORTS_MAP}
  COMMAND ${CMAKE_SOURCE_DIR}/tools/public-symbols.sh --cc ${CMAKE_C_COMPILER} --version-script -o ${TG_EXPORTS_MAP}
          ${CMAKE_SOURCE_DIR}/include
  DEPENDS ${TG_PUBLIC_HEADERS} ${CMAKE_SOURCE_DIR}/tools/public-symbols.sh
  COMMENT "tickgrad.map: the symbols the public headers declare" VERBATIM)

add_library(tickgrad_shared SHARED $<TARGET_OBJECTS:tickgrad_common> $<TARGET_OBJECTS:tickgrad_variant>
            ${TG_EXPORTS_MAP})
set_target_properties(tickgrad_shared PROPERTIES OUTPUT_NAME tickgrad VERSION ${PROJECT_VERSION}
  SOVERSION ${TG_SOVERSION} LINK_DEPENDS ${TG_EXPORTS_MAP}
  # the directories of the libraries it links outside the system's (NCCL in the CUDA toolkit) stay in its RUNPATH
  INSTALL_RPATH_USE_LINK_PATH ON)
# --no-undefined: the library carries every dependency it needs, so a program links -ltickgrad and nothing else
target_link_options(tickgrad_shared PRIVATE -Wl,--version-script=${TG_EXPORTS_MAP})
if(NOT TG_SANITIZE AND NOT TG_FUZZ)
  target_link_options(tickgrad_shared PRIVATE -Wl,--no-undefined)
endif()
target_include_directories(tickgrad_shared INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>)
target_link_libraries(tickgrad_shared PRIVATE ${TG_LIB_LINK_ALL})

# The libraries the static library needs after it, as linker arguments (tickgrad.pc's Libs.private, and
# tickgrad::tickgrad_static's link interface): imported targets become their files and flags.
set(TG_STATIC_DEPS)
foreach(item ${TG_LIB_LINK_ALL})
  if(item STREQUAL "OpenMP::OpenMP_C")
    list(APPEND TG_STATIC_DEPS ${OpenMP_C_FLAGS} ${OpenMP_C_LIBRARIES})
  elseif(item STREQUAL "ZLIB::ZLIB")
    list(APPEND TG_STATIC_DEPS ${ZLIB_LIBRARIES})
  elseif(item STREQUAL "Threads::Threads")
    list(APPEND TG_STATIC_DEPS ${CMAKE_THREAD_LIBS_INIT})
  elseif(item STREQUAL "MPI::MPI_C")
    separate_arguments(mpi_flags UNIX_COMMAND "${MPI_C_LINK_FLAGS}")
    list(APPEND TG_STATIC_DEPS ${mpi_flags} ${MPI_C_LIBRARIES})
  elseif(item STREQUAL "CUDA::cudart_static")
    get_target_property(loc CUDA::cudart_static IMPORTED_LOCATION)
    list(APPEND TG_STATIC_DEPS ${loc} -ldl -lrt ${CMAKE_THREAD_LIBS_INIT})
  elseif(item MATCHES "::")
    message(FATAL_ERROR "cmake/install.cmake: no rule for the library's dependency ${item}")
  elseif(item MATCHES "^-" OR IS_ABSOLUTE "${item}")
    list(APPEND TG_STATIC_DEPS ${item})
  else()
    list(APPEND TG_STATIC_DEPS -l${item})
  endif()
endforeach()
list(REMOVE_DUPLICATES TG_STATIC_DEPS)
if(TG_HAVE_CUDA)
  list(APPEND TG_STATIC_DEPS -lstdc++) # the CUDA backend's host code is C++
endif()
list(JOIN TG_STATIC_DEPS " " TG_PC_LIBS_PRIVATE)

set(TG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tickgrad)
set(TG_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# each installed file reaches the prefix by a relative path: the prefix is chosen at install time
file(RELATIVE_PATH TG_PC_TO_PREFIX /root/${TG_PC_DIR} /root)
file(RELATIVE_PATH TG_CMAKE_TO_PREFIX /root/${TG_CMAKE_DIR} /root)
string(REGEX REPLACE "/$" "" TG_PC_TO_PREFIX "${TG_PC_TO_PREFIX}")
string(REGEX REPLACE "/$" "" TG_CMAKE_TO_PREFIX "${TG_CMAKE_TO_PREFIX}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/tickgrad.pc.in ${CMAKE_BINARY_DIR}/generated/tickgrad.pc @ONLY)
configure_file(${CMAKE_SOURCE_DIR}/cmake/tickgradConfig.cmake.in ${CMAKE_BINARY_DIR}/generated/tickgradConfig.cmake @ONLY)
# 0.x: a package of another minor version is not compatible (as the soname says)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/generated/tickgradConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)

install(TARGETS tickgrad_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS tickgrad ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${TG_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tickgrad)
install(FILES ${CMAKE_BINARY_DIR}/generated/tickgrad.pc DESTINATION ${TG_PC_DIR})
install(FILES ${CMAKE_BINARY_DIR}/generated/tickgradConfig.cmake ${CMAKE_BINARY_DIR}/generated/tickgradConfigVersion.cmake
        DESTINATION ${TG_CMAKE_DIR})
