// The header compiles as C++ (extern "C" guards) and links.
#include "b2frame.h"

#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  b2f_cparams p;
  b2f_cparams_default(&p);
  p.typesize = 4;
  std::vector<int> src(10000);
  for (size_t i = 0; i < src.size(); i++) src[i] = int(i);
  std::vector<unsigned char> chunk(b2f_max_compressed_size(src.size() * 4));
  size_t cbytes = 0;
  if (b2f_compress(&p, src.data(), src.size() * 4, chunk.data(), chunk.size(), &cbytes) != B2F_OK) return 1;
  std::vector<int> out(src.size());
  size_t nbytes = 0;
  if (b2f_decompress(chunk.data(), cbytes, out.data(), out.size() * 4, &nbytes) != B2F_OK) return 1;
  if (nbytes != src.size() * 4 || std::memcmp(out.data(), src.data(), nbytes) != 0) return 1;
  std::printf("1 passed, 0 failed\n");
  return 0;
}
