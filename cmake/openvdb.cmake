# OpenVDB 10 (Debian) as the target OpenVDB::openvdb, for the main build and
# the fuzz build. Its find module also demands Boost.Iostreams (for delayed
# loading, which Eddy does not use), so the target is declared here.
# Needs TBB::tbb (find_package(TBB) first).
find_path(EDDY_OPENVDB_INCLUDE openvdb/openvdb.h REQUIRED)
find_library(EDDY_OPENVDB_LIB openvdb REQUIRED)
find_library(EDDY_IMATH_LIB NAMES Imath-3_1 Imath REQUIRED)
add_library(OpenVDB::openvdb UNKNOWN IMPORTED)
set_target_properties(OpenVDB::openvdb PROPERTIES
  IMPORTED_LOCATION ${EDDY_OPENVDB_LIB}
  INTERFACE_INCLUDE_DIRECTORIES ${EDDY_OPENVDB_INCLUDE})
target_link_libraries(OpenVDB::openvdb INTERFACE ${EDDY_IMATH_LIB} TBB::tbb)
