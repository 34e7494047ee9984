# NZ_ZSTD_ROOT: build against the libzstd under that prefix (its include/
# and lib/<multiarch>/, e.g. the usr/ that scripts/zstd-debian13.sh unpacks)
# instead of the system's, and run with it: every target that links libzstd
# or c-blosc gets that libzstd as a direct dependency and its folder as a
# RUNPATH. The dynamic loader finds a library by soname first, so Debian's
# own c-blosc, loaded beside it, calls that libzstd too
# (tests/codec/zstd_root.sh checks both). Included by the top CMakeLists.txt
# in place of pkg-config's libzstd; it makes the same target, PkgConfig::ZSTD.
find_path(NZ_ZSTD_INCLUDE_DIR zstd.h PATHS ${NZ_ZSTD_ROOT}/include NO_DEFAULT_PATH)
find_library(NZ_ZSTD_LIBRARY NAMES zstd NO_DEFAULT_PATH
  PATHS ${NZ_ZSTD_ROOT}/lib/${CMAKE_LIBRARY_ARCHITECTURE} ${NZ_ZSTD_ROOT}/lib)
if(NOT NZ_ZSTD_INCLUDE_DIR OR NOT NZ_ZSTD_LIBRARY OR NOT NZ_ZSTD_LIBRARY MATCHES "\\.so$")
  message(FATAL_ERROR "NZ_ZSTD_ROOT=${NZ_ZSTD_ROOT}: no include/zstd.h and lib/[${CMAKE_LIBRARY_ARCHITECTURE}/]libzstd.so "
    "there (scripts/zstd-debian13.sh DIR unpacks Debian 13's into DIR/usr)")
endif()
file(STRINGS ${NZ_ZSTD_INCLUDE_DIR}/zstd.h _nz_zv REGEX "^#define ZSTD_VERSION_(MAJOR|MINOR|RELEASE) ")
string(REGEX REPLACE ".*MAJOR +([0-9]+).*MINOR +([0-9]+).*RELEASE +([0-9]+).*" "\\1.\\2.\\3" ZSTD_VERSION "${_nz_zv}")
get_filename_component(NZ_ZSTD_LIBDIR ${NZ_ZSTD_LIBRARY} DIRECTORY)
message(STATUS "nwbzarr: libzstd ${ZSTD_VERSION} from ${NZ_ZSTD_ROOT} (RUNPATH ${NZ_ZSTD_LIBDIR})")

# Linked even where no object calls ZSTD_* itself (bench/bare_shard calls
# only c-blosc): Debian's gcc passes --as-needed, which would drop it.
set(CMAKE_C_LINK_LIBRARY_USING_NZ_NEEDED "LINKER:--push-state,--no-as-needed" "<LINK_ITEM>" "LINKER:--pop-state")
set(CMAKE_C_LINK_LIBRARY_USING_NZ_NEEDED_SUPPORTED TRUE)
add_library(PkgConfig::ZSTD INTERFACE IMPORTED)
set_target_properties(PkgConfig::ZSTD PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${NZ_ZSTD_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES "$<LINK_LIBRARY:NZ_NEEDED,${NZ_ZSTD_LIBRARY}>"
  # RUNPATH, not the older RPATH, so that LD_LIBRARY_PATH can still override
  # it; the folder itself CMake adds as the build RPATH of a full-path library.
  INTERFACE_LINK_OPTIONS "LINKER:--enable-new-dtags")
# The installed nwbzarr.pc and nwbzarrConfig.cmake name the module as the
# system build does: an installed static library's users link their own.
set(ZSTD_MODULE_NAME libzstd)
# Installed programs and the Python extension keep the RUNPATH (named here:
# CMake does not derive it from a $<LINK_LIBRARY:...> item).
list(APPEND CMAKE_INSTALL_RPATH ${NZ_ZSTD_LIBDIR})
set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)
# c-blosc's users need that libzstd as a direct dependency of their own:
# RUNPATH applies only to an object's own dependencies, not to c-blosc's.
set_property(TARGET PkgConfig::BLOSC APPEND PROPERTY INTERFACE_LINK_LIBRARIES PkgConfig::ZSTD)
