from assay._entry import main

main()
