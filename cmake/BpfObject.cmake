# locus_bpf_object(NAME <target> SOURCE <bpf/x.bpf.c>)
#
# Compiles one BPF C file with clang (CO-RE: -g -O2 -target bpf), links it with
# `bpftool gen object` (static linking, strips DWARF that the kernel does not
# need), then generates `<name>.skel.h` with `bpftool gen skeleton`. Exposes
# INTERFACE target <target> whose include directory holds the skeleton, so
# C++ code writes #include "<name>.skel.h" and links <target>.
#
# Header edits rebuild the object: clang writes a depfile (-MD -MF -MT) that
# ninja/make read through add_custom_command(DEPFILE).
#
# vmlinux.h is generated once per build tree from the build host's BTF
# (LOCUS_VMLINUX_BTF, default /sys/kernel/btf/vmlinux). CO-RE relocates field
# offsets at load time, so any recent BTF works as the compile-time reference;
# generating it keeps a 3 MB arch-specific file out of git. Point
# LOCUS_VMLINUX_H at a pre-generated header to build on a host without BTF.

find_program(LOCUS_BPF_CLANG NAMES clang clang-14 REQUIRED)
find_program(LOCUS_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin REQUIRED)
set(LOCUS_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH
    "BTF blob vmlinux.h is generated from")
set(LOCUS_VMLINUX_H "" CACHE FILEPATH
    "Pre-generated vmlinux.h (empty: generate from LOCUS_VMLINUX_BTF)")

set(LOCUS_BPF_GEN_DIR ${CMAKE_BINARY_DIR}/bpfgen)
if(LOCUS_VMLINUX_H)
  set(LOCUS_VMLINUX_DIR ${LOCUS_BPF_GEN_DIR}/vmlinux)
  configure_file(${LOCUS_VMLINUX_H} ${LOCUS_VMLINUX_DIR}/vmlinux.h COPYONLY)
  add_custom_target(locus_vmlinux_h)
else()
  set(LOCUS_VMLINUX_DIR ${LOCUS_BPF_GEN_DIR}/vmlinux)
  add_custom_command(
    OUTPUT ${LOCUS_VMLINUX_DIR}/vmlinux.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${LOCUS_VMLINUX_DIR}
    # Absolute paths, no WORKING_DIRECTORY: Unix Makefiles enter that folder
    # before the first command could create it (Ninja creates it itself).
    COMMAND sh -c "${LOCUS_BPFTOOL} btf dump file ${LOCUS_VMLINUX_BTF} format c > ${LOCUS_VMLINUX_DIR}/vmlinux.h.tmp && mv ${LOCUS_VMLINUX_DIR}/vmlinux.h.tmp ${LOCUS_VMLINUX_DIR}/vmlinux.h"
    COMMENT "vmlinux.h from ${LOCUS_VMLINUX_BTF}"
    VERBATIM)
  add_custom_target(locus_vmlinux_h DEPENDS ${LOCUS_VMLINUX_DIR}/vmlinux.h)
endif()

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|amd64")
  set(LOCUS_BPF_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(LOCUS_BPF_ARCH arm64)
else()
  message(FATAL_ERROR "locus_bpf_object: unsupported arch ${CMAKE_SYSTEM_PROCESSOR}")
endif()

function(locus_bpf_object)
  cmake_parse_arguments(ARG "" "NAME;SOURCE" "" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_SOURCE)
    message(FATAL_ERROR "locus_bpf_object needs NAME and SOURCE")
  endif()
  get_filename_component(src ${ARG_SOURCE} ABSOLUTE)
  get_filename_component(stem ${src} NAME_WE)  # x.bpf.c -> x
  set(out_dir ${LOCUS_BPF_GEN_DIR}/${ARG_NAME})
  set(tmp_obj ${out_dir}/${stem}.tmp.bpf.o)
  set(obj ${out_dir}/${stem}.bpf.o)
  set(skel ${out_dir}/${stem}.skel.h)
  set(dep ${out_dir}/${stem}.d)

  # Relative depfile paths are what ninja expects for DEPFILE outputs.
  add_custom_command(
    OUTPUT ${tmp_obj}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${LOCUS_BPF_CLANG} -g -O2 -target bpf
            -D__TARGET_ARCH_${LOCUS_BPF_ARCH}
            -Wall -Werror -Wno-unused-function
            # BTF's line info names the source: relative names keep the
            # skeleton (and the sensors that include it) the same bytes in
            # every checkout, so ccache can share their objects.
            -fdebug-prefix-map=${PROJECT_SOURCE_DIR}=.
            -fdebug-prefix-map=${CMAKE_BINARY_DIR}=build
            -I${LOCUS_VMLINUX_DIR} -I${PROJECT_SOURCE_DIR}/bpf/include
            -MD -MF ${dep} -MT ${tmp_obj}
            -c ${src} -o ${tmp_obj}
    DEPENDS ${src} locus_vmlinux_h ${LOCUS_VMLINUX_DIR}/vmlinux.h
    DEPFILE ${dep}
    COMMENT "clang -target bpf ${ARG_SOURCE}"
    VERBATIM)
  add_custom_command(
    OUTPUT ${obj} ${skel}
    COMMAND ${LOCUS_BPFTOOL} gen object ${obj} ${tmp_obj}
    COMMAND sh -c "${LOCUS_BPFTOOL} gen skeleton ${obj} name ${stem}_bpf > ${skel}.tmp && mv ${skel}.tmp ${skel}"
    DEPENDS ${tmp_obj}
    COMMENT "bpftool gen skeleton ${stem}"
    VERBATIM)
  add_custom_target(${ARG_NAME}_gen DEPENDS ${skel})
  add_library(${ARG_NAME} INTERFACE)
  add_dependencies(${ARG_NAME} ${ARG_NAME}_gen)
  # The skeleton and the ABI headers it is read with (locus/*.h).
  target_include_directories(${ARG_NAME} INTERFACE ${out_dir}
                             ${PROJECT_SOURCE_DIR}/bpf/include)
  target_link_libraries(${ARG_NAME} INTERFACE PkgConfig::LIBBPF)
endfunction()
