// Command percdb-gorm-smoke is the GORM smoke test of tests/e2e
// (TestGORM): models with a belongs-to, has-many and many-to-many
// association, a unique and a plain index, soft delete; AutoMigrate twice
// (the second must change nothing), the Migrator's introspection (tables,
// columns and their types, indexes, constraints), create with
// associations, preload, an expression update, a transaction rolled back,
// a duplicate key, an upsert, a join, FOR UPDATE, adding, renaming and
// dropping columns and indexes, dropping tables. Arguments: host port.
// Its output is compared with MariaDB's. It is a module of its own so
// that GORM stays out of percdb's dependencies.
package main

import (
	"fmt"
	"os"
	"time"

	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
)

type Company struct {
	ID   uint
	Name string `gorm:"size:64;uniqueIndex"`
}

type User struct {
	ID        uint    `gorm:"primaryKey"`
	Name      string  `gorm:"size:100;not null;index"`
	Email     *string `gorm:"size:120;uniqueIndex"`
	Age       uint8
	Balance   float64 `gorm:"type:decimal(12,2)"`
	Birthday  *time.Time
	CompanyID *uint
	Company   Company
	Posts     []Post
	Languages []Language `gorm:"many2many:user_languages;"`
	CreatedAt time.Time
	UpdatedAt time.Time
	DeletedAt gorm.DeletedAt `gorm:"index"`
}

type Post struct {
	ID     uint
	UserID uint
	Title  string `gorm:"size:200"`
	Body   string `gorm:"type:text"`
}

// PostV2 is Post with a column more, as a later version of the
// application declares it.
type PostV2 struct {
	ID      uint
	UserID  uint
	Title   string `gorm:"size:200"`
	Body    string `gorm:"type:text"`
	Summary string `gorm:"size:50"`
}

func (PostV2) TableName() string { return "posts" }

type Language struct {
	ID   uint
	Code string `gorm:"size:8;uniqueIndex"`
}

func must(err error) {
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
}

func main() {
	host, port := os.Args[1], os.Args[2]
	root, err := gorm.Open(mysql.Open(fmt.Sprintf("root@tcp(%s:%s)/?parseTime=true", host, port)), &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	must(err)
	must(root.Exec("DROP DATABASE IF EXISTS gormdb").Error)
	must(root.Exec("CREATE DATABASE gormdb").Error)
	db, err := gorm.Open(mysql.Open(fmt.Sprintf("root@tcp(%s:%s)/gormdb?parseTime=true&charset=utf8mb4&loc=UTC", host, port)), &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	must(err)
	must(db.AutoMigrate(&Company{}, &User{}, &Post{}, &Language{}))
	must(db.AutoMigrate(&Company{}, &User{}, &Post{}, &Language{})) // again: no change
	m := db.Migrator()
	fmt.Println("has", m.HasTable(&User{}), m.HasColumn(&User{}, "Email"), m.HasIndex(&User{}, "Name"), m.HasConstraint(&User{}, "Company"))
	cols, err := m.ColumnTypes(&User{})
	must(err)
	for _, c := range cols {
		if c.Name() == "email" || c.Name() == "balance" {
			dt, _ := c.ColumnType()
			n, _ := c.Nullable()
			u, _ := c.Unique()
			fmt.Println("col", c.Name(), c.DatabaseTypeName(), dt, n, u)
		}
	}
	email := "a@x"
	co := Company{Name: "acme"}
	must(db.Create(&co).Error)
	en, fr := Language{Code: "en"}, Language{Code: "fr"}
	u := User{Name: "ann", Email: &email, Age: 30, Balance: 10.5, CompanyID: &co.ID, Languages: []Language{en, fr}, Posts: []Post{{Title: "p1", Body: "b"}, {Title: "p2"}}}
	must(db.Create(&u).Error)
	var got User
	must(db.Preload("Posts").Preload("Languages").Preload("Company").First(&got, u.ID).Error)
	fmt.Println("user", got.Name, *got.Email, got.Age, got.Balance, got.Company.Name, len(got.Posts), len(got.Languages))
	must(db.Model(&got).Update("age", gorm.Expr("age + ?", 1)).Error)
	terr := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&User{Name: "bob"}).Error; err != nil {
			return err
		}
		return fmt.Errorf("roll back")
	})
	fmt.Println("transaction", terr)
	var n int64
	db.Model(&User{}).Count(&n)
	fmt.Println("count", n)
	err = db.Create(&User{Name: "dup", Email: &email}).Error
	fmt.Println("dup", err != nil)
	must(db.Clauses(clause.OnConflict{UpdateAll: true}).Create(&Language{ID: en.ID, Code: "en"}).Error)
	must(db.Delete(&got).Error) // soft delete
	db.Model(&User{}).Count(&n)
	var all int64
	db.Unscoped().Model(&User{}).Count(&all)
	fmt.Println("soft delete", n, all)
	var rows []struct {
		Name  string
		Posts int
	}
	must(db.Unscoped().Table("users").Select("users.name, count(posts.id) as posts").Joins("left join posts on posts.user_id = users.id").Group("users.name").Scan(&rows).Error)
	fmt.Println("join", rows)
	var locked User
	must(db.Unscoped().Clauses(clause.Locking{Strength: "UPDATE"}).First(&locked).Error)
	must(m.AddColumn(&PostV2{}, "Summary"))
	fmt.Println("add column again fails", m.AddColumn(&PostV2{}, "Summary") != nil)
	must(m.RenameColumn(&PostV2{}, "summary", "abstract"))
	fmt.Println("renamed", m.HasColumn(&PostV2{}, "abstract"), m.HasColumn(&PostV2{}, "summary"))
	must(m.DropColumn(&PostV2{}, "abstract"))
	must(db.AutoMigrate(&PostV2{})) // adds summary back
	fmt.Println("migrated", m.HasColumn(&PostV2{}, "summary"))
	must(m.DropIndex(&User{}, "Name"))
	fmt.Println("index dropped", !m.HasIndex(&User{}, "Name"))
	must(m.CreateIndex(&User{}, "Name"))
	must(m.DropTable(&PostV2{}, "user_languages", &Language{}, &User{}, &Company{}))
	fmt.Println("done", m.HasTable(&User{}))
}
