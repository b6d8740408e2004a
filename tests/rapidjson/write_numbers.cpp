// What RapidJSON's stock writer (the Debian package Batsim is built against) makes of doubles:
// each line of standard input is a double's 64 bits in 16 hex digits; prints the text
// rapidjson::Writer<StringBuffer>::Double writes for it (Batsim writes a job's description so), or
// "error" when Double refuses it (NaN, infinities). Built and run by tests/test_batsim_numbers.py.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

int main()
{
  std::string line;
  while (std::getline(std::cin, line)) {
    uint64_t bits = std::strtoull(line.c_str(), nullptr, 16);
    double value;
    std::memcpy(&value, &bits, sizeof value);
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    if (!writer.Double(value)) {
      std::printf("error\n");
      continue;
    }
    std::printf("%s\n", buffer.GetString());
  }
  return 0;
}
