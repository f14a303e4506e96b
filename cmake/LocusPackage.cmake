# Installation layout and the Debian package: `cpack -G DEB` in a build
# directory makes locus_VERSION_ARCH.deb with
#   /usr/sbin/locusd, /usr/bin/locusctl          (when those targets exist)
#   /usr/lib/systemd/system/locusd.service, /usr/lib/sysusers.d/locus.conf
#   /usr/share/locus/policy.yaml                  the default policy, commented
#   /usr/share/man/man8/locus{d,ctl}.8.gz         (when scdoc is installed)
#   /usr/share/bash-completion/completions/locusctl
# and maintainer scripts that create the `locus` group.
#
# The policy is shipped as an example, not as /etc/locus/policy.yaml: locusd
# applies the same built-in default when that file is absent, and a conffile
# copy would freeze old defaults on upgraded hosts and prompt on every change.
# Included last from the top-level CMakeLists.txt, after every target exists.

include(GNUInstallDirs)

set(LOCUS_DEPLOY_DIR ${PROJECT_SOURCE_DIR}/deploy)
# Paths inside the package (CPACK_PACKAGING_INSTALL_PREFIX is /usr); the unit
# names /usr/sbin/locusd, so the binaries' places are fixed here too.
set(LOCUS_UNIT_DIR lib/systemd/system)

if(TARGET locusd)
  install(TARGETS locusd RUNTIME DESTINATION sbin)
endif()
if(TARGET locusctl)
  install(TARGETS locusctl RUNTIME DESTINATION bin)
endif()

install(FILES ${LOCUS_DEPLOY_DIR}/systemd/locusd.service
        DESTINATION ${LOCUS_UNIT_DIR})
install(FILES ${LOCUS_DEPLOY_DIR}/systemd/locus.sysusers
        DESTINATION lib/sysusers.d RENAME locus.conf)
install(FILES ${LOCUS_DEPLOY_DIR}/completion/locusctl
        DESTINATION share/bash-completion/completions)
if(EXISTS ${LOCUS_DEPLOY_DIR}/policy/nginx.yaml)
  install(FILES ${LOCUS_DEPLOY_DIR}/policy/nginx.yaml
          DESTINATION share/locus RENAME policy.yaml)
endif()

# Man pages: scdoc sources -> build/man/man8/NAME.8 (readable with MANPATH,
# which the unit test uses) and NAME.8.gz (what Debian installs).
find_program(LOCUS_SCDOC scdoc)
set(LOCUS_MAN_DIR ${CMAKE_BINARY_DIR}/man)
if(LOCUS_SCDOC)
  set(LOCUS_MAN_OUTPUTS)
  foreach(page locusd.8 locusctl.8)
    set(src ${LOCUS_DEPLOY_DIR}/man/${page}.scd)
    set(out ${LOCUS_MAN_DIR}/man8/${page})
    add_custom_command(
      OUTPUT ${out} ${out}.gz
      COMMAND ${CMAKE_COMMAND} -E make_directory ${LOCUS_MAN_DIR}/man8
      COMMAND sh -c "\"$0\" < \"$1\" > \"$2\" && gzip -9nc \"$2\" > \"$2.gz\""
              ${LOCUS_SCDOC} ${src} ${out}
      DEPENDS ${src}
      COMMENT "scdoc ${page}"
      VERBATIM)
    list(APPEND LOCUS_MAN_OUTPUTS ${out})
    install(FILES ${out}.gz DESTINATION share/man/man8)
  endforeach()
  add_custom_target(locus_man ALL DEPENDS ${LOCUS_MAN_OUTPUTS})
else()
  message(WARNING "scdoc not found: the man pages are not built or packaged")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME locus)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Locus maintainers <locus@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "eBPF-driven NUMA placement agent for nginx hosts")
set(CPACK_PACKAGE_DESCRIPTION
    "locusd watches nginx workers with eBPF and moves their threads, memory\n\
and network interrupts to the NUMA node where they belong, journaling every\n\
change so that it can be undone. locusctl shows what it does and why.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Runtime library dependencies come from dpkg-shlibdeps; groupadd from passwd.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS passwd)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS bash-completion)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${LOCUS_DEPLOY_DIR}/systemd/deb/postinst
    ${LOCUS_DEPLOY_DIR}/systemd/deb/prerm
    ${LOCUS_DEPLOY_DIR}/systemd/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
