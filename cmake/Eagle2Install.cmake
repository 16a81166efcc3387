# `cmake --install BUILD --prefix P`: the library as an outside program uses it (docs/LIBRARY.md).
#   P/include/eagle2/*.h                         the public API, and nothing of src/
#   P/lib/libeagle2.a, P/lib/libeagle2_*.a        the API and the engine's layers below it
#   P/lib/cmake/eagle2/                           find_package(eagle2) -> eagle2::eagle2
#   P/lib/pkgconfig/eagle2.pc                     pkg-config --cflags --libs eagle2
#   P/bin/eagle2                                  the CLI
#
# The engine stays several static archives, one per layer (src/CMakeLists.txt), installed as they
# are rather than merged into one: the exported CMake targets then carry CMake's own link graph
# (order and dependencies), nothing is compiled or archived twice, and no ar script has to cope
# with object files of the same name in two layers. What the package needs (the layers, the
# third-party libraries) is read from that graph below, so a new layer or dependency is installed
# and exported without an edit here, and a dependency this file cannot express is a configure
# error rather than a package that fails to link.
include(CMakePackageConfigHelpers)

# Walks the link graph below `target` (the build's own libraries; IMPORTED targets are the
# third-party dependencies). Appends each library to the global property eagle2_install_order after
# the libraries it links (post-order) and each imported target to eagle2_install_external.
function(eagle2_visit_links target)
  get_property(seen GLOBAL PROPERTY eagle2_install_seen)
  if(target IN_LIST seen)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY eagle2_install_seen ${target})
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(deps ${target} INTERFACE_LINK_LIBRARIES)
  else()
    get_target_property(deps ${target} LINK_LIBRARIES)
  endif()
  if(NOT deps)
    set(deps "")
  endif()
  foreach(dep IN LISTS deps)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
    if(NOT TARGET ${dep})
      message(FATAL_ERROR "${target} links '${dep}', which is not a target: the installed package "
                          "could not say how to find it (link an imported target instead)")
    endif()
    get_target_property(imported ${dep} IMPORTED)
    if(imported)
      set_property(GLOBAL APPEND PROPERTY eagle2_install_external ${dep})
    else()
      eagle2_visit_links(${dep})
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY eagle2_install_order ${target})
endfunction()

# The build's libraries that `target` needs, in link order (each before the libraries it uses:
# the reverse of the walk's post-order), and the imported third-party targets among them.
function(eagle2_link_closure target out_libraries out_external)
  set_property(GLOBAL PROPERTY eagle2_install_seen "")
  set_property(GLOBAL PROPERTY eagle2_install_order "")
  set_property(GLOBAL PROPERTY eagle2_install_external "")
  eagle2_visit_links(${target})
  get_property(order GLOBAL PROPERTY eagle2_install_order)
  list(REVERSE order)
  get_property(external GLOBAL PROPERTY eagle2_install_external)
  list(REMOVE_DUPLICATES external)
  set(${out_libraries} ${order} PARENT_SCOPE)
  set(${out_external} ${external} PARENT_SCOPE)
endfunction()

eagle2_link_closure(eagle2 eagle2_libraries eagle2_external)

# What a consumer needs to recreate each third-party target (eagle2Config.cmake) and to link it
# with pkg-config (eagle2.pc).
set(config_dependencies "")
set(pc_requires "")
set(pc_libs_extra "")
foreach(dep IN LISTS eagle2_external)
  if(dep STREQUAL "Threads::Threads")
    string(APPEND config_dependencies "find_dependency(Threads)\n")
    string(APPEND pc_libs_extra " -pthread")
  elseif(dep STREQUAL "nlohmann_json::nlohmann_json")
    # Header-only and used by the engine's sources only (no public header includes it): the
    # exported targets name it, so CMake must find it (any version: a consumer never compiles
    # with it); pkg-config users need nothing.
    string(APPEND config_dependencies "find_dependency(nlohmann_json)\n")
  elseif(dep STREQUAL "ZLIB::ZLIB")
    string(APPEND config_dependencies "find_dependency(ZLIB)\n")
    list(APPEND pc_requires zlib)
  elseif(dep MATCHES "^PkgConfig::(.+)$")
    set(prefix ${CMAKE_MATCH_1})
    set(module ${${prefix}_MODULE_NAME})
    if(NOT module)
      message(FATAL_ERROR "${dep}: no pkg-config module name recorded (${prefix}_MODULE_NAME)")
    endif()
    string(APPEND config_dependencies "eagle2_find_pkg_config(${prefix} ${module})\n")
    list(APPEND pc_requires ${module})
  else()
    message(FATAL_ERROR "the eagle2 library links ${dep}: teach cmake/Eagle2Install.cmake how an "
                        "installed package finds it (eagle2Config.cmake and eagle2.pc)")
  endif()
endforeach()

# The archives in link order, as pkg-config's Libs says them.
set(pc_libs "")
foreach(lib IN LISTS eagle2_libraries)
  get_target_property(type ${lib} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    get_target_property(name ${lib} OUTPUT_NAME)
    if(NOT name)
      set(name ${lib})
    endif()
    string(APPEND pc_libs " -l${name}")
  endif()
endforeach()
list(JOIN pc_requires " " pc_requires)

set(package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/eagle2)
install(TARGETS ${eagle2_libraries} EXPORT eagle2Targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/eagle2 DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(EXPORT eagle2Targets NAMESPACE eagle2:: DESTINATION ${package_dir})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/eagle2Config.cmake.in
  ${PROJECT_BINARY_DIR}/eagle2Config.cmake INSTALL_DESTINATION ${package_dir})
# 0.x: minor versions may change the API (docs/LIBRARY.md "Stability"), so only the same minor
# version satisfies a request.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/eagle2ConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/eagle2Config.cmake ${PROJECT_BINARY_DIR}/eagle2ConfigVersion.cmake
        DESTINATION ${package_dir})

# The .pc file finds its prefix from its own place (${pcfiledir}), so that it stays right under
# `cmake --install --prefix P` (chosen after configuring) and when the tree is moved.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  message(FATAL_ERROR "eagle2.pc needs CMAKE_INSTALL_LIBDIR and CMAKE_INSTALL_INCLUDEDIR relative "
                      "to the install prefix")
endif()
file(RELATIVE_PATH pc_to_prefix /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
set(pc_prefix "\${pcfiledir}/${pc_to_prefix}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/eagle2.pc.in ${PROJECT_BINARY_DIR}/eagle2.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/eagle2.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(TARGETS eagle2_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
