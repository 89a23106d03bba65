# Cross-compiling for aarch64 with Debian's multiarch packages (sh tools/deps.sh arm64):
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CCREE_TRIPLET aarch64-linux-gnu)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CCREE_MACHINE aarch64)
set(CCREE_QEMU qemu-aarch64-static)
include(${CMAKE_CURRENT_LIST_DIR}/cross.cmake)
