// The statistics of timed calls every timing in the engine reports (the CPU verdict, the
// CUDA runner, the CUDA yardstick): one definition, so two figures of one kind agree.
#pragma once

#include <vector>

namespace bench {

// The middle timed call (the mean of the middle two for an even count); 0 for none.
double median(std::vector<double> t);
// Sample standard deviation over mean; 0 for fewer than two calls.
double coefficient_of_variation(const std::vector<double>& t);

}  // namespace bench
