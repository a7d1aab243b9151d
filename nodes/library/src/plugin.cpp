// The built-in node library is a plug-in like any other: eddy loads it from
// its plug-in folder through eddy_register_nodes.
#include "library.h"

extern "C" __attribute__((visibility("default"))) int eddy_plugin_abi() { return EDDY_PLUGIN_ABI; }

extern "C" __attribute__((visibility("default"))) void eddy_register_nodes(eddy::Registry& r) {
  eddy::library::register_emitters(r);
  eddy::library::register_colliders(r);
  eddy::library::register_sources(r);
  eddy::library::register_pbf(r);
  eddy::library::register_sph(r);
  eddy::library::register_mpm(r);
  eddy::library::register_points(r);
  eddy::library::register_io(r);
  eddy::library::register_surfacing(r);
  eddy::library::register_files(r);
  eddy::library::register_rigid(r);
  eddy::library::register_soft(r);
}
