explain gpu_sticks ANE076
