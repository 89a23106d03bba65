# Cross-compiling for 32-bit Armv7 (armhf) with Debian's multiarch packages (sh tools/deps.sh
# armhf): size_t is 32 bits there, so sums of lengths wrap where a 64-bit build cannot show it.
#   cmake -S . -B build-armhf -DCMAKE_TOOLCHAIN_FILE=cmake/arm-linux-gnueabihf.cmake
set(CCREE_TRIPLET arm-linux-gnueabihf)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CCREE_MACHINE armv7l)
set(CCREE_QEMU qemu-arm-static)
include(${CMAKE_CURRENT_LIST_DIR}/cross.cmake)
