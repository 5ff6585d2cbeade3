from ontoskills.cli import main

main()
