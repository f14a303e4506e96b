# Installation layout and the Debian package: `cpack -G DEB` in a build
# directory makes locus_VERSION_ARCH.deb with
#   /usr/sbin/locusd, /usr/bin/locusctl          (when those targets exist)
#   /usr/lib/systemd/system/locusd.service, /usr/lib/sysusers.d/locus.conf
#   /etc/locus/policy.yaml                        conffile: the default policy,
#                                                 every key commented out
#   /usr/share/locus/proto/locus/v1/*.proto       the gRPC API and the policy
#                                                 schema, for clients
#   /usr/share/man/man8/locus{d,ctl}.8.gz,
#   /usr/share/man/man5/locus-policy.5.gz         (when scdoc is installed)
#   /usr/share/bash-completion/completions/locusctl
#   /usr/share/zsh/vendor-completions/_locusctl
#   /usr/share/doc/locus/copyright, changelog.gz  (GPL-2.0-only, see LICENSE)
# and maintainer scripts (deploy/deb/) that create the `locus` group and hand
# the unit to deb-systemd-helper, as debhelper's would.
#
# The policy is a conffile, as Debian expects of a daemon's configuration
# (Policy 10.7: it lives in /etc, dpkg keeps the admin's edits and asks before
# replacing them, purge removes it). Its keys are all commented out, as in
# sshd_config, so that it is exactly the built-in default: an admin who sets
# one key does not freeze every other default at this version's value, and an
# upgrade that changes a default changes it on hosts that never set that key.
# The package is native (its packaging is the source tree's, versioned with
# it), hence changelog.gz rather than changelog.Debian.gz.
# Included last from the top-level CMakeLists.txt, after every target exists.

include(GNUInstallDirs)

set(LOCUS_DEPLOY_DIR ${PROJECT_SOURCE_DIR}/deploy)
set(LOCUS_DEB_DIR ${LOCUS_DEPLOY_DIR}/deb)
# What the package build generates (changelog, conffile, man pages).
set(LOCUS_PACKAGE_BUILD_DIR ${CMAKE_BINARY_DIR}/package)
# Paths inside the package (CPACK_PACKAGING_INSTALL_PREFIX is /usr); the unit
# names /usr/sbin/locusd, so the binaries' places are fixed here too.
set(LOCUS_UNIT_DIR lib/systemd/system)
set(LOCUS_DOC_DIR share/doc/locus)
set(LOCUS_PACKAGE_MAINTAINER "Locus maintainers <maintainers@locus.invalid>"
    CACHE STRING "Maintainer field of the .deb and its changelog (Name <mail>)")

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
install(FILES ${LOCUS_DEPLOY_DIR}/completion/_locusctl
        DESTINATION share/zsh/vendor-completions)
install(FILES ${PROJECT_SOURCE_DIR}/proto/locus/v1/agent.proto
              ${PROJECT_SOURCE_DIR}/proto/locus/v1/policy.proto
        DESTINATION share/locus/proto/locus/v1)
install(FILES ${LOCUS_DEB_DIR}/copyright DESTINATION ${LOCUS_DOC_DIR})

set(LOCUS_PACKAGE_OUTPUTS)

# The conffile, from the policy room's spelled-out default.
set(LOCUS_DEFAULT_POLICY ${LOCUS_DEPLOY_DIR}/policy/nginx.yaml)
if(EXISTS ${LOCUS_DEFAULT_POLICY})
  set(conffile ${LOCUS_PACKAGE_BUILD_DIR}/policy.yaml)
  add_custom_command(
    OUTPUT ${conffile}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${LOCUS_PACKAGE_BUILD_DIR}
    COMMAND ${LOCUS_DEPLOY_DIR}/policy/conffile.sh ${LOCUS_DEFAULT_POLICY}
            ${conffile}
    DEPENDS ${LOCUS_DEFAULT_POLICY} ${LOCUS_DEPLOY_DIR}/policy/conffile.sh
    COMMENT "conffile /etc/locus/policy.yaml"
    VERBATIM)
  list(APPEND LOCUS_PACKAGE_OUTPUTS ${conffile})
  # Absolute: /etc is outside CPACK_PACKAGING_INSTALL_PREFIX.
  install(FILES ${conffile} DESTINATION /etc/locus)
  set(LOCUS_CONFFILES ${LOCUS_DEB_DIR}/conffiles)
endif()

# The changelog's one entry, for this version. Its date is SOURCE_DATE_EPOCH
# when set (reproducible builds), else the last commit's, else now.
set(changelog_date_format "%a, %d %b %Y %H:%M:%S +0000")
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  string(TIMESTAMP LOCUS_CHANGELOG_DATE ${changelog_date_format} UTC)
else()
  execute_process(
    COMMAND git -C ${PROJECT_SOURCE_DIR} log -1 --format=%ct
    OUTPUT_VARIABLE commit_time OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE git_rc ERROR_QUIET)
  if(git_rc EQUAL 0 AND commit_time)
    # string(TIMESTAMP) formats SOURCE_DATE_EPOCH, not a given time.
    set(ENV{SOURCE_DATE_EPOCH} ${commit_time})
  endif()
  string(TIMESTAMP LOCUS_CHANGELOG_DATE ${changelog_date_format} UTC)
  unset(ENV{SOURCE_DATE_EPOCH})
endif()
configure_file(${LOCUS_DEB_DIR}/changelog.in ${LOCUS_PACKAGE_BUILD_DIR}/changelog
               @ONLY)
add_custom_command(
  OUTPUT ${LOCUS_PACKAGE_BUILD_DIR}/changelog.gz
  COMMAND sh -c "gzip -9nc \"$0\" > \"$0.gz\"" ${LOCUS_PACKAGE_BUILD_DIR}/changelog
  DEPENDS ${LOCUS_PACKAGE_BUILD_DIR}/changelog
  COMMENT "changelog.gz"
  VERBATIM)
list(APPEND LOCUS_PACKAGE_OUTPUTS ${LOCUS_PACKAGE_BUILD_DIR}/changelog.gz)
install(FILES ${LOCUS_PACKAGE_BUILD_DIR}/changelog.gz DESTINATION ${LOCUS_DOC_DIR})

# Man pages: scdoc sources -> build/man/manN/NAME.N (readable with MANPATH,
# which the unit test uses) and NAME.N.gz (what Debian installs).
find_program(LOCUS_SCDOC scdoc)
set(LOCUS_MAN_DIR ${CMAKE_BINARY_DIR}/man)
if(LOCUS_SCDOC)
  foreach(page locusd.8 locusctl.8 locus-policy.5)
    string(REGEX REPLACE ".*\\." "" section ${page})
    set(src ${LOCUS_DEPLOY_DIR}/man/${page}.scd)
    set(out ${LOCUS_MAN_DIR}/man${section}/${page})
    add_custom_command(
      OUTPUT ${out} ${out}.gz
      COMMAND ${CMAKE_COMMAND} -E make_directory ${LOCUS_MAN_DIR}/man${section}
      COMMAND sh -c "\"$0\" < \"$1\" > \"$2\" && gzip -9nc \"$2\" > \"$2.gz\""
              ${LOCUS_SCDOC} ${src} ${out}
      DEPENDS ${src}
      COMMENT "scdoc ${page}"
      VERBATIM)
    list(APPEND LOCUS_PACKAGE_OUTPUTS ${out})
    install(FILES ${out}.gz DESTINATION share/man/man${section})
  endforeach()
else()
  message(WARNING "scdoc not found: the man pages are not built or packaged")
endif()
add_custom_target(locus_package_files ALL DEPENDS ${LOCUS_PACKAGE_OUTPUTS})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME locus)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${LOCUS_PACKAGE_MAINTAINER})
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
# Runtime library dependencies come from dpkg-shlibdeps; groupadd from passwd;
# /bin/kill (the unit's ExecReload) from procps, which is not essential.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "passwd, procps")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS bash-completion)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${LOCUS_DEB_DIR}/postinst ${LOCUS_DEB_DIR}/prerm ${LOCUS_DEB_DIR}/postrm
    ${LOCUS_CONFFILES})
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
