explain ANE008 nn-broadcastable
