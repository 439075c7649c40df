// Catch2 for tests that include libtorch. libtorch pulls in glog, whose CHECK macros
// would silently replace Catch's (a failing CHECK would then abort or pass unseen), so
// include the torch headers first, drop glog's names, then include Catch.
#pragma once

#include <ATen/ATen.h>

#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LT
#undef CHECK_LE
#undef CHECK_GT
#undef CHECK_GE
#undef CHECK_NOTNULL
#include <catch2/catch.hpp>
