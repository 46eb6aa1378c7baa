#include <iostream>
#include "tensor/ops.h"
int main() { std::cout << prism::randn({3, 4}) << "\n"; }
