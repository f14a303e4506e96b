# locus_proto_library(NAME <target> PROTOS <file.proto>... [GRPC] [DEPS <target>...])
#
# Compiles proto/ sources (paths relative to ${PROJECT_SOURCE_DIR}/proto) with
# protoc, and with grpc_cpp_plugin when GRPC is given, into a static library.
# Generated headers are included as "locus/v1/<name>.pb.h".
# Normalized: protoc needs -I to be an exact textual prefix of the file path.
get_filename_component(LOCUS_PROTO_ROOT ${CMAKE_CURRENT_LIST_DIR}/../proto ABSOLUTE)
set(LOCUS_PROTO_OUT ${CMAKE_BINARY_DIR}/gen)
find_program(LOCUS_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

function(locus_proto_library)
  cmake_parse_arguments(ARG "GRPC" "NAME" "PROTOS;DEPS" ${ARGN})
  set(srcs)
  foreach(proto IN LISTS ARG_PROTOS)
    get_filename_component(abs ${LOCUS_PROTO_ROOT}/${proto} ABSOLUTE)
    string(REGEX REPLACE "\\.proto$" "" stem ${proto})
    set(outs ${LOCUS_PROTO_OUT}/${stem}.pb.cc ${LOCUS_PROTO_OUT}/${stem}.pb.h)
    set(plugin_args)
    if(ARG_GRPC)
      list(APPEND outs ${LOCUS_PROTO_OUT}/${stem}.grpc.pb.cc ${LOCUS_PROTO_OUT}/${stem}.grpc.pb.h)
      set(plugin_args --grpc_out=${LOCUS_PROTO_OUT}
                      --plugin=protoc-gen-grpc=${LOCUS_GRPC_CPP_PLUGIN})
    endif()
    add_custom_command(
      OUTPUT ${outs}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${LOCUS_PROTO_OUT}
      COMMAND protobuf::protoc -I ${LOCUS_PROTO_ROOT} --cpp_out=${LOCUS_PROTO_OUT}
              ${plugin_args} ${abs}
      DEPENDS ${abs} protobuf::protoc
      COMMENT "protoc ${proto}"
      VERBATIM)
    list(APPEND srcs ${outs})
  endforeach()
  add_library(${ARG_NAME} STATIC ${srcs})
  target_include_directories(${ARG_NAME} PUBLIC ${LOCUS_PROTO_OUT})
  # Generated code is not ours to warn about.
  target_compile_options(${ARG_NAME} PRIVATE -w)
  target_link_libraries(${ARG_NAME} PUBLIC protobuf::libprotobuf ${ARG_DEPS})
  if(ARG_GRPC)
    target_link_libraries(${ARG_NAME} PUBLIC gRPC::grpc++)
  endif()
endfunction()
