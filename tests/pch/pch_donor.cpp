// Compiles tests/CMakeLists.txt's shared precompiled header (eagle2_test_pch); every test
// executable reuses it. Nothing to link: the file only gives the header a target to build in.
