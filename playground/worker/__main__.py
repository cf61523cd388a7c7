from playground.worker.main import main

main()
