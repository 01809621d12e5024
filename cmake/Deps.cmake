# Header-only dependencies from Debian: nlohmann_json (nlohmann-json3-dev) and GLM (libglm-dev).
# Under Emscripten find_package cannot see /usr (the toolchain restricts it to the sysroot) and
# -I/usr/include would drag glibc headers in, so expose only these two header trees through a
# private include directory of symlinks.
if(NOT EMSCRIPTEN)
  find_package(nlohmann_json 3.10 CONFIG REQUIRED)
  find_package(glm CONFIG REQUIRED)
else()
  set(HOST_HEADER_ROOT "/usr/include" CACHE PATH "Host dir containing glm/ and nlohmann/")
  set(_deps_inc "${CMAKE_BINARY_DIR}/_deps_include")
  file(MAKE_DIRECTORY "${_deps_inc}")
  foreach(_d glm nlohmann)
    if(NOT EXISTS "${HOST_HEADER_ROOT}/${_d}")
      message(FATAL_ERROR "${HOST_HEADER_ROOT}/${_d} not found (apt-get install libglm-dev nlohmann-json3-dev)")
    endif()
    if(NOT EXISTS "${_deps_inc}/${_d}")
      file(CREATE_LINK "${HOST_HEADER_ROOT}/${_d}" "${_deps_inc}/${_d}" SYMBOLIC)
    endif()
  endforeach()
  add_library(glm::glm INTERFACE IMPORTED)
  set_target_properties(glm::glm PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_deps_inc}")
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  set_target_properties(nlohmann_json::nlohmann_json PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_deps_inc}")
endif()
