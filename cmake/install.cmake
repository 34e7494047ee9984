# Installation, included at the end of src/CMakeLists.txt (after every layer
# has added its sources and dependencies). `cmake --install BUILD [--prefix P]`
# puts into P:
#   include/nwbzarr.h, include/nwbzarr/*.h      the public headers
#   lib/libnwbzarr.a (libnwbzarr.so with BUILD_SHARED_LIBS=ON)
#   bin/nwbzarr                                 the CLI (rule in src/cli)
#   lib/pkgconfig/nwbzarr.pc
#   lib/cmake/nwbzarr/nwbzarr{Config,ConfigVersion,Targets*}.cmake
# so another project needs one line: `cc app.c $(pkg-config --cflags --libs
# nwbzarr)`, or find_package(nwbzarr) and target_link_libraries(app PRIVATE
# nwbzarr::nwbzarr). tests/install checks both against an installed copy.
#
# The static library `nwbzarr` is always built: tests, the CLI, fuzzers and
# benches link it and call internal nz__ functions, which -fvisibility=hidden
# would keep out of a shared library. BUILD_SHARED_LIBS=ON also builds
# libnwbzarr.so from the same sources (exporting only NZ_EXTERN functions)
# and installs it instead of the static library.
include(CMakePackageConfigHelpers)

if(BUILD_SHARED_LIBS)
  get_target_property(_nz_sources nwbzarr SOURCES)
  get_target_property(_nz_includes nwbzarr INCLUDE_DIRECTORIES)
  get_target_property(_nz_links nwbzarr LINK_LIBRARIES)
  add_library(nwbzarr_shared SHARED ${_nz_sources})
  target_include_directories(nwbzarr_shared PRIVATE ${_nz_includes}
    INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # Every dependency is private to the shared library: public headers include
  # only the C library's.
  target_link_libraries(nwbzarr_shared PRIVATE ${_nz_links})
  # 0.x releases may break the ABI at every minor version.
  set_target_properties(nwbzarr_shared PROPERTIES OUTPUT_NAME nwbzarr
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  set(_nz_lib nwbzarr_shared)
else()
  set(_nz_lib nwbzarr)
endif()
# The same name for projects that add_subdirectory() this one.
add_library(nwbzarr::nwbzarr ALIAS ${_nz_lib})
set_target_properties(${_nz_lib} PROPERTIES EXPORT_NAME nwbzarr)

# Describe what a static library's users must link, for nwbzarr.pc and for
# nwbzarrConfig.cmake (which recreates the imported targets that the exported
# link interface names), from the library's own link interface so that a
# layer's new dependency is picked up here.
set(_nz_pc_requires "")     # pkg-config modules
set(_nz_pc_libs "")         # plain linker flags
set(_nz_cfg_modules "")     # PREFIX=module for PkgConfig::PREFIX
set(_nz_cfg_hdf5 OFF)
set(_nz_cfg_threads OFF)
get_target_property(_nz_iface nwbzarr INTERFACE_LINK_LIBRARIES)
foreach(_dep IN LISTS _nz_iface)
  if(_dep MATCHES "^\\$<")
    # $<LINK_ONLY:$<BUILD_INTERFACE:...>>: build-only, not installed.
  elseif(_dep MATCHES "^PkgConfig::(.+)$")
    set(_prefix ${CMAKE_MATCH_1})
    list(APPEND _nz_pc_requires ${${_prefix}_MODULE_NAME})
    list(APPEND _nz_cfg_modules "${_prefix}=${${_prefix}_MODULE_NAME}")
  elseif(_dep STREQUAL "HDF5::HDF5")
    set(_nz_cfg_hdf5 ON)
    # Debian names the serial HDF5 (which the build uses) hdf5-serial; plain
    # hdf5 may be an alternative pointing at the MPI one.
    foreach(_module hdf5-serial hdf5 "")
      if(_module STREQUAL "")
        foreach(_lib IN LISTS HDF5_C_LIBRARIES)
          list(APPEND _nz_pc_libs ${_lib})
        endforeach()
        break()
      endif()
      execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --exists ${_module} RESULT_VARIABLE _rc)
      if(_rc EQUAL 0)
        list(APPEND _nz_pc_requires ${_module})
        break()
      endif()
    endforeach()
  elseif(_dep STREQUAL "Threads::Threads")
    set(_nz_cfg_threads ON)
    list(APPEND _nz_pc_libs -pthread)
  elseif(_dep MATCHES "^[A-Za-z0-9_]+$")
    list(APPEND _nz_pc_libs -l${_dep})
  else()
    message(WARNING "cmake/install.cmake: nwbzarr links '${_dep}', which nwbzarr.pc and "
      "nwbzarrConfig.cmake do not describe; installed static-library users will miss it")
  endif()
endforeach()
list(JOIN _nz_pc_requires " " _nz_pc_requires)
list(JOIN _nz_pc_libs " " _nz_pc_libs)

# A static library's dependencies are needed by every link, so they go in
# Requires/Libs: plain `pkg-config --libs nwbzarr` then links. A shared
# library's are needed only for static links (Requires.private/Libs.private),
# and the CMake package then needs none of them.
if(BUILD_SHARED_LIBS)
  set(NZ_PC_REQUIRES "")
  set(NZ_PC_REQUIRES_PRIVATE "${_nz_pc_requires}")
  set(NZ_PC_LIBS "")
  set(NZ_PC_LIBS_PRIVATE "${_nz_pc_libs}")
  set(NZ_CONFIG_MODULES "")
  set(NZ_CONFIG_HDF5 OFF)
  set(NZ_CONFIG_THREADS OFF)
else()
  set(NZ_PC_REQUIRES "${_nz_pc_requires}")
  set(NZ_PC_REQUIRES_PRIVATE "")
  set(NZ_PC_LIBS "${_nz_pc_libs}")
  set(NZ_PC_LIBS_PRIVATE "")
  set(NZ_CONFIG_MODULES "${_nz_cfg_modules}")
  set(NZ_CONFIG_HDF5 ${_nz_cfg_hdf5})
  set(NZ_CONFIG_THREADS ${_nz_cfg_threads})
endif()
foreach(_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(NZ_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(NZ_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()

install(TARGETS ${_nz_lib} EXPORT nwbzarrTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

# nwbzarr.pc names the prefix the files are installed into, which
# `cmake --install --prefix P` may change after configuring: the template is
# filled now except @CMAKE_INSTALL_PREFIX@, which is filled at install time.
set(NZ_PC_PREFIX "@CMAKE_INSTALL_PREFIX@")
configure_file(${PROJECT_SOURCE_DIR}/cmake/nwbzarr.pc.in ${PROJECT_BINARY_DIR}/nwbzarr.pc.in @ONLY)
install(CODE "configure_file(\"${PROJECT_BINARY_DIR}/nwbzarr.pc.in\" \"${PROJECT_BINARY_DIR}/nwbzarr.pc\" @ONLY)")
install(FILES ${PROJECT_BINARY_DIR}/nwbzarr.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set(_nz_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/nwbzarr)
install(EXPORT nwbzarrTargets NAMESPACE nwbzarr:: DESTINATION ${_nz_cmakedir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/nwbzarrConfig.cmake.in
  ${PROJECT_BINARY_DIR}/nwbzarrConfig.cmake INSTALL_DESTINATION ${_nz_cmakedir})
# 0.x: a minor release may break the API; from 1.0 on, a major one.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_nz_compat SameMinorVersion)
else()
  set(_nz_compat SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/nwbzarrConfigVersion.cmake
  COMPATIBILITY ${_nz_compat})
install(FILES ${PROJECT_BINARY_DIR}/nwbzarrConfig.cmake ${PROJECT_BINARY_DIR}/nwbzarrConfigVersion.cmake
  DESTINATION ${_nz_cmakedir})
