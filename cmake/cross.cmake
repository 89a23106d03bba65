# Shared by the cross toolchain files, which set CCREE_TRIPLET, CMAKE_SYSTEM_PROCESSOR,
# CCREE_MACHINE (what `uname -m` says there) and CCREE_QEMU (its qemu-user).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${CCREE_TRIPLET}-gcc)
# Reads the target's .pc files: libcrypto's modulesdir is /usr/lib/<triplet>/ossl-modules.
set(PKG_CONFIG_EXECUTABLE ${CCREE_TRIPLET}-pkg-config)
# ctest runs each test binary through this launcher.
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/cross-run ${CCREE_MACHINE} ${CCREE_QEMU})
