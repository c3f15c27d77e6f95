# `cpack -G DEB` in the build folder: a tbdprof .deb of the `tbdprof` install component (the command,
# its collector and the simulated GPU under /usr/lib/tbdprof, the bash completion).
#
# Dependencies are listed by hand rather than found by dpkg-shlibdeps: the simulated GPU's libraries
# carry NVIDIA's sonames (libcuda.so.1, ...), which shlibdeps would try to resolve to NVIDIA's
# packages. The test tests/packaging/deb.sh checks that every library the packaged binaries load
# comes from a package named here.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "tbdprof")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "tbdprof developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "framework-agnostic GPU profiler and memory analyzer for deep-learning training")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEB_COMPONENT_INSTALL ON)
# Debug info is most of a RelWithDebInfo binary; symbols stay (call stacks keep their names).
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL tbdprof)
set(CPACK_DEBIAN_TBDPROF_PACKAGE_NAME "tbdprof")
set(CPACK_DEBIAN_TBDPROF_FILE_NAME "DEB-DEFAULT")
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
set(CPACK_DEBIAN_TBDPROF_PACKAGE_DEPENDS
    "libc6 (>= 2.34), libstdc++6 (>= 12), libgcc-s1, libsqlite3-0, libsimdjson14, libisal2, libunwind8, libzstd1, zlib1g, liblzma5, libfmt9")
# tbdprof-fleet (many ranks' traces on Dask) needs Dask distributed; nothing else does.
set(CPACK_DEBIAN_TBDPROF_PACKAGE_SUGGESTS "python3-distributed")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Records CUDA allocations, kernel launches and library calls of any program with an LD_PRELOAD\n collector, tags device memory as weights, activations, gradients, optimizer state, workspace or\n input, and reports GPU utilization, FP32 throughput and memory breakdowns. Includes a simulated GPU\n (tbdprof --sim) for machines without one.")
include(CPack)
