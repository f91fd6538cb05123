# libsodium, the bundles' hashes (BLAKE2b) and signatures (Ed25519), as the
# imported target PkgConfig::attn_sodium (the name the installed package's
# targets link by): through pkg-config where it knows libsodium (Debian:
# libsodium-dev), else the header and library found on CMAKE_PREFIX_PATH and
# the system's paths. The second way serves a GPU machine without pkg-config
# or libsodium-dev that builds the runtime from source with the copy
# scripts/gpu-bundle writes (scripts/gpu-check passes
# -DCMAKE_PREFIX_PATH=OUT/deps). The build and the installed package's
# config both include this file.
if(NOT TARGET PkgConfig::attn_sodium)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(attn_sodium QUIET IMPORTED_TARGET libsodium)
  endif()
  if(TARGET PkgConfig::attn_sodium)
    message(STATUS "attn: libsodium ${attn_sodium_VERSION} (pkg-config)")
  endif()
endif()
if(NOT TARGET PkgConfig::attn_sodium)
  find_path(ATTN_SODIUM_INCLUDE_DIR sodium.h)
  find_library(ATTN_SODIUM_LIBRARY sodium)
  if(NOT ATTN_SODIUM_INCLUDE_DIR OR NOT ATTN_SODIUM_LIBRARY)
    message(FATAL_ERROR "attn: libsodium not found, neither by pkg-config "
      "nor as sodium.h and libsodium on CMAKE_PREFIX_PATH (Debian: install "
      "libsodium-dev; a GPU machine: -DCMAKE_PREFIX_PATH=OUT/deps, the copy "
      "scripts/gpu-bundle writes)")
  endif()
  add_library(PkgConfig::attn_sodium INTERFACE IMPORTED)
  set_target_properties(PkgConfig::attn_sodium PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${ATTN_SODIUM_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${ATTN_SODIUM_LIBRARY}")
  message(STATUS "attn: libsodium ${ATTN_SODIUM_LIBRARY} (without pkg-config)")
endif()
