# Cross-compiling for aarch64 with Debian's multiarch packages (sh tools/deps.sh arm64):
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
# Reads the arm64 .pc files: libcrypto's modulesdir is /usr/lib/aarch64-linux-gnu/ossl-modules.
set(PKG_CONFIG_EXECUTABLE aarch64-linux-gnu-pkg-config)
# ctest runs each test binary through this launcher.
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/aarch64-run)
