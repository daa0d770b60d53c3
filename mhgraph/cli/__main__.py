from mhgraph.cli import main

main()
