#include "config.h"
#include <stdio.h>
int main(int argc, char **argv) { (void)argc; (void)argv; puts("hunter"); return 0; }
