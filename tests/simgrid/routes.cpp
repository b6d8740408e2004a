// What SimGrid 3.32 itself says of the routes of a platform under ptask_L07 (Batsim's host model):
// for each SRC:DST argument, the latency Host::route_to sums (17 digits) and its links (name,
// bandwidth, latency, sharing policy); then the clock when one 1-byte message, sent alone at 1000 s
// along the first pair, has arrived.
// Built and run by tests/test_simgrid_routes.py.
#include <simgrid/s4u.hpp>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
  simgrid::s4u::Engine engine(&argc, argv);
  engine.set_config("host/model:ptask_L07");
  engine.load_platform(argv[1]);
  engine.seal_platform();
  for (int i = 2; i < argc; i++) {
    std::string pair = argv[i];
    size_t colon     = pair.find(':');
    auto* src        = simgrid::s4u::Host::by_name(pair.substr(0, colon));
    auto* dst        = simgrid::s4u::Host::by_name(pair.substr(colon + 1));
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    src->route_to(dst, links, &latency);
    std::printf("route %d %.17g", i - 2, latency);
    for (auto const* link : links)
      std::printf(" %s/%.17g/%.17g/%d", link->get_cname(), link->get_bandwidth(), link->get_latency(),
                  static_cast<int>(link->get_sharing_policy()));
    std::printf("\n");
  }
  auto* src = simgrid::s4u::Host::by_name(std::string(argv[2]).substr(0, std::string(argv[2]).find(':')));
  auto* dst = simgrid::s4u::Host::by_name(std::string(argv[2]).substr(std::string(argv[2]).find(':') + 1));
  simgrid::s4u::Actor::create("receiver", dst, []() { simgrid::s4u::Mailbox::by_name("m")->get<int>(); });
  simgrid::s4u::Actor::create("sender", src, []() {
    static int payload = 1;
    simgrid::s4u::this_actor::sleep_for(1000.0);
    simgrid::s4u::Mailbox::by_name("m")->put(&payload, 1);
    std::printf("arrived %.17g\n", simgrid::s4u::Engine::get_clock());
  });
  engine.run();
  return 0;
}
