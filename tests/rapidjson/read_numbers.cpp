// What RapidJSON (the Debian package Batsim is built against) reads from each line of standard
// input, parsed as Batsim parses a decision process's message: Document::Parse with the default
// flags, then GetDouble(). Prints the double's 64 bits in hex, or "error" when RapidJSON refuses
// the text. Built and run by tests/test_batsim_numbers.py.
#include <rapidjson/document.h>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

int main()
{
  std::string line;
  while (std::getline(std::cin, line)) {
    std::string message = "{\"now\":" + line + "}";
    rapidjson::Document doc;
    doc.Parse(message.c_str());
    if (doc.HasParseError() || !doc["now"].IsNumber()) {
      std::printf("error\n");
      continue;
    }
    double value = doc["now"].GetDouble();
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    std::printf("%016" PRIx64 "\n", bits);
  }
  return 0;
}
