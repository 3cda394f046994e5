// Command hello is what gobuild's test builds.
package main

import "fmt"

func main() { fmt.Println("hello from a built program") }
